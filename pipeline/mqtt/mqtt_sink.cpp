// Sink `mqtt`: each frame's detections (the `detections` file's line) and, every metrics.interval_s,
// the metrics summary, published to an MQTT broker (libmosquitto). The graph never waits for the
// broker: messages go into a bounded queue that a thread of this sink drains while the broker is
// connected; libmosquitto reconnects with backoff when it goes away, and a full queue drops its
// oldest message (counted). A retained status topic says "online", and the broker publishes the
// last will, "offline", for a rig that vanishes without saying so.
#include <mosquitto.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "pipeline/credentials.hpp"
#include "pipeline/detections_json.hpp"
#include "pipeline/registry.hpp"

namespace pp::mqtt {

namespace {

struct MqttParams {
  std::string host = "127.0.0.1";
  int port = 1883;
  std::string topic = "polarpipe/{pipeline}/{source}/detections";
  std::string metrics_topic = "polarpipe/{pipeline}/metrics";
  std::string status_topic = "polarpipe/{pipeline}/status";
  int qos = 1;
  std::string client_id;
  int keep_alive_s = 30;
  Path credentials;
  std::string credentials_env = "POLARPIPE_MQTT_CREDENTIALS";
  Path ca_file, cert_file, key_file;
  int queue = 1000;
  double connect_timeout_s = 5;
  double drain_timeout_s = 2;
};

// libmosquitto's process-wide set-up, once.
void initLibrary() {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
}

std::string expand(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

std::string hostName() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

class MqttSink : public Sink {
 public:
  using Params = MqttParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("host", &Params::host, "the broker's address")
            .add("port", &Params::port, "the broker's port (1883; 8883 is usual with TLS)", intIn(1, 65535))
            .add("topic", &Params::topic,
                 "topic of each frame's detections (with no input connected, none: metrics and status alone); "
                 "{pipeline} (the config file's name), {source} and {host} are replaced")
            .add("metrics_topic", &Params::metrics_topic,
                 "topic of the metrics summary, every metrics.interval_s; '' for none")
            .add("status_topic", &Params::status_topic,
                 "retained topic saying online, and offline when the rig stops or (the broker's last will) "
                 "vanishes; '' for none")
            .add("qos", &Params::qos, "MQTT quality of service: 0 at most once, 1 at least once", intIn(0, 1))
            .add("client_id", &Params::client_id, "the client id; '': polarpipe-{pipeline}-{host}")
            .add("keep_alive_s", &Params::keep_alive_s, "seconds between pings when idle", intIn(5, 3600))
            .add("credentials", &Params::credentials, "file of one user:password line", existingFile())
            .add("credentials_env", &Params::credentials_env,
                 "or the environment variable holding user:password (used when set and credentials is not)")
            .add("ca_file", &Params::ca_file, "TLS: the CA certificate(s) to check the broker's against",
                 existingFile())
            .add("cert_file", &Params::cert_file, "TLS: this client's certificate (with key_file)", existingFile())
            .add("key_file", &Params::key_file, "TLS: this client's private key", existingFile())
            .add("queue", &Params::queue,
                 "messages held while the broker is away; when full the oldest is dropped (counted)", intIn(1, 1000000))
            .add("connect_timeout_s", &Params::connect_timeout_s,
                 "at start, how long to wait for the broker's answer before going on without it (it keeps "
                 "trying)",
                 numberIn(0, 600))
            .add("drain_timeout_s", &Params::drain_timeout_s, "at the end, how long queued messages may take to go out",
                 numberIn(0, 600));
    return schema;
  }

  MqttSink(const Params& p, ParamContext& ctx) : p_(p), pipeline_(ctx.pipeline), host_(hostName()) {
    try {
      if (!p.credentials.empty()) {
        user_ = readCredentials(p.credentials.value).front();
      } else if (const char* env = std::getenv(p.credentials_env.c_str()); env && *env && !p.credentials_env.empty()) {
        user_ = parseCredentials(env, p.credentials_env).front();
      }
    } catch (const std::invalid_argument& e) {
      ctx.error(e.what());
    }
    if (p.cert_file.empty() != p.key_file.empty()) ctx.error("give cert_file and key_file together");
    if (!p.cert_file.empty() && p.ca_file.empty()) ctx.error("a client certificate needs ca_file (TLS)");
    if (p.topic.empty()) ctx.error("topic is empty");
    clientId_ = p.client_id.empty() ? "polarpipe-" + pipeline_ + "-" + host_ : p.client_id;
  }

  ~MqttSink() override { stop(); }

  void setup(PortSetup& ports) override {
    inputs_ = ports.connectedInputs();
    bool inputsKnown = true;
    for (const auto& name : inputs_) {
      const PortSpec* spec = ports.input(name);
      inputsKnown = inputsKnown && spec;
      if (spec && spec->kind != PortKind::detections)
        ports.fail("input '" + name + "' is an image; mqtt publishes detections");
    }
    // No broker touched to validate, nor for a graph that will not run.
    if (ports.devices() != PortSetup::Devices::use || !inputsKnown) return;
    std::string problem = connect();
    if (!problem.empty()) {
      stop();
      ports.fail(problem);
      return;
    }
    publisher_ = std::thread([this] { publishLoop(); });
  }

  void consume(const SinkFrame& frame) override {
    if (inputs_.empty()) return;  // a sink for the metrics and the status alone
    const FrameMeta& m = frame.meta();
    enqueue(topicFor(p_.topic, m.source), detectionsJson(frame, inputs_).dump(), false);
  }

  void report(const MetricsReport& r) override {
    if (p_.metrics_topic.empty() || !mosq_) return;
    nlohmann::json counters = nlohmann::json::object();
    for (const auto& [node, counter] : r.counters) counters[node + "." + counter->name] = counter->value->load();
    nlohmann::json message = {{"pipeline", pipeline_},
                              {"host", host_},
                              {"frames", r.frames},
                              {"fps", r.fps},
                              {"latency_p50_ms", r.latencyP50Ms},
                              {"latency_p99_ms", r.latencyP99Ms},
                              {"drops", r.drops},
                              {"slots_in_use", r.slotsInUse},
                              {"slots", r.slots},
                              {"counters", counters}};
    enqueue(topicFor(p_.metrics_topic, ""), message.dump(), false);
  }

  void finish() override {
    if (!mosq_) return;
    {  // what is queued goes out while the broker is there, for at most drain_timeout_s
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::duration<double>(p_.drain_timeout_s),
                     [&] { return (queue_.empty() && inflight_ == 0) || !connected_; });
      if (!queue_.empty())
        spdlog::warn("mqtt: {} messages never reached the broker (counted as dropped)", queue_.size());
      dropped_ += queue_.size();
      queue_.clear();
      queued_ = 0;
    }
    if (!p_.status_topic.empty() && connected_) {
      publishNow(topicFor(p_.status_topic, ""), "offline", true);  // said, so the will is not needed
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::seconds(1), [&] { return inflight_ == 0 || !connected_; });
    }
    stop();
  }

  std::string destination() const override { return "mqtt://" + p_.host + ":" + std::to_string(p_.port); }

  std::vector<Counter> counters() const override {
    return {
        {"mqtt_published", "messages the broker took, status ones too (QoS 1: acknowledged; QoS 0: sent)", &published_},
        {"mqtt_dropped", "messages dropped because the queue was full while the broker was away", &dropped_},
        {"mqtt_queued", "messages waiting for the broker", &queued_, true},
        {"mqtt_connected", "1 while connected to the broker", &connectedGauge_, true},
        {"mqtt_connections", "connections made to the broker (reconnections after the first)", &connections_}};
  }

 private:
  struct Message {
    std::string topic, payload;
    bool retain;
  };

  std::string topicFor(const std::string& pattern, const std::string& source) const {
    return expand(expand(expand(pattern, "{pipeline}", pipeline_), "{source}", source), "{host}", host_);
  }

  // Connects once, waiting up to connect_timeout_s for the broker's answer. "" when connected or
  // when the broker is not there yet (libmosquitto keeps trying); otherwise why it cannot be used:
  // a refused login or a failed TLS handshake will not mend by retrying.
  std::string connect() {
    initLibrary();
    std::string where = "the broker at " + p_.host + ":" + std::to_string(p_.port);
    mosq_ = mosquitto_new(clientId_.c_str(), true, this);
    if (!mosq_) return "cannot create an MQTT client: out of memory";
    if (!user_.first.empty()) mosquitto_username_pw_set(mosq_, user_.first.c_str(), user_.second.c_str());
    if (!p_.status_topic.empty())
      mosquitto_will_set(mosq_, topicFor(p_.status_topic, "").c_str(), 7, "offline", 1, true);
    if (!p_.ca_file.empty()) {
      int rc = mosquitto_tls_set(mosq_, p_.ca_file.value.c_str(), nullptr,
                                 p_.cert_file.empty() ? nullptr : p_.cert_file.value.c_str(),
                                 p_.key_file.empty() ? nullptr : p_.key_file.value.c_str(), nullptr);
      if (rc != MOSQ_ERR_SUCCESS) return "TLS settings refused: " + std::string(mosquitto_strerror(rc));
    }
    mosquitto_threaded_set(mosq_, true);  // published to from this sink's threads, the network run by networkLoop
    mosquitto_connect_callback_set(mosq_,
                                   [](mosquitto*, void* self, int rc) { static_cast<MqttSink*>(self)->onConnect(rc); });
    mosquitto_disconnect_callback_set(
        mosq_, [](mosquitto*, void* self, int rc) { static_cast<MqttSink*>(self)->onDisconnect(rc); });
    mosquitto_publish_callback_set(mosq_,
                                   [](mosquitto*, void* self, int) { static_cast<MqttSink*>(self)->onPublished(); });

    int rc = mosquitto_connect(mosq_, p_.host.c_str(), p_.port, p_.keep_alive_s);
    if (rc == MOSQ_ERR_TLS) return "TLS handshake with " + where + " failed: check ca_file, cert_file and key_file";
    if (rc == MOSQ_ERR_INVAL) return where + ": invalid host or port";
    bool reached = rc == MOSQ_ERR_SUCCESS;
    if (!reached)
      spdlog::warn("mqtt: {} is not reachable ({}); messages wait (up to {}) while it keeps trying", where,
                   rc == MOSQ_ERR_ERRNO ? std::strerror(errno) : mosquitto_strerror(rc), p_.queue);
    socketUp_ = reached;
    network_ = std::thread([this] { networkLoop(); });
    if (!reached) return "";
    std::unique_lock lock(mutex_);
    if (!wake_.wait_for(lock, std::chrono::duration<double>(p_.connect_timeout_s),
                        [&] { return answered_ || tlsFailed_; }))
      spdlog::warn("mqtt: {} has not answered in {} s; going on without it", where, p_.connect_timeout_s);
    else if (tlsFailed_)
      return "TLS handshake with " + where + " failed: check ca_file, cert_file and key_file";
    else if (refused_ != 0)
      return where + " refused the connection: " + mosquitto_connack_string(refused_) +
             (refused_ == 4 || refused_ == 5 ? " (check the user and password in credentials)" : "");
    return "";
  }

  void onConnect(int rc) {
    {
      std::lock_guard lock(mutex_);
      answered_ = true;
      refused_ = rc;
      connected_ = rc == 0;
      connectedGauge_ = connected_ ? 1 : 0;
      if (connected_) ++connections_;
      // A new session: libmosquitto sends unacknowledged QoS 1 messages again, but QoS 0 ones are gone.
      if (connected_ && p_.qos == 0) inflight_ = 0;
    }
    if (rc != 0) spdlog::error("mqtt: the broker refused the connection: {}", mosquitto_connack_string(rc));
    if (rc == 0 && !p_.status_topic.empty()) publishNow(topicFor(p_.status_topic, ""), "online", true);
    wake_.notify_all();
  }

  void onDisconnect(int rc) {
    bool was = false;
    {
      std::lock_guard lock(mutex_);
      was = connected_;
      connected_ = false;
      connectedGauge_ = 0;
    }
    if (was && rc != 0 && !stopping_) spdlog::warn("mqtt: lost the broker ({}); reconnecting", mosquitto_strerror(rc));
    wake_.notify_all();
  }

  void onPublished() {
    {
      std::lock_guard lock(mutex_);
      if (inflight_ > 0) --inflight_;
    }
    ++published_;
    wake_.notify_all();
  }

  void enqueue(std::string topic, std::string payload, bool retain) {
    {
      std::lock_guard lock(mutex_);
      if (queue_.size() >= static_cast<size_t>(p_.queue)) {
        queue_.pop_front();
        ++dropped_;
      }
      queue_.push_back({std::move(topic), std::move(payload), retain});
      queued_ = queue_.size();
    }
    wake_.notify_all();
  }

  // Sends one message at once, outside the queue (status). Never with mutex_ held: libmosquitto's
  // own locks and its callbacks (which take mutex_) must not wait on each other.
  void publishNow(const std::string& topic, const std::string& payload, bool retain) {
    {
      std::lock_guard lock(mutex_);
      ++inflight_;
    }
    if (mosquitto_publish(mosq_, nullptr, topic.c_str(), static_cast<int>(payload.size()), payload.data(), 1, retain) !=
        MOSQ_ERR_SUCCESS) {
      std::lock_guard lock(mutex_);
      --inflight_;
    }
  }

  // Hands queued messages to libmosquitto while connected, at most kInFlight unacknowledged, so
  // that what waits for the broker stays in the bounded queue (libmosquitto's own is unbounded).
  void publishLoop() {
    constexpr int kInFlight = 64;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || (connected_ && inflight_ < kInFlight && !queue_.empty()); });
      if (stopping_) return;
      Message m = std::move(queue_.front());
      queue_.pop_front();
      queued_ = queue_.size();
      ++inflight_;
      lock.unlock();
      int rc = mosquitto_publish(mosq_, nullptr, m.topic.c_str(), static_cast<int>(m.payload.size()), m.payload.data(),
                                 p_.qos, m.retain);
      lock.lock();
      if (rc != MOSQ_ERR_SUCCESS) {  // not connected after all: back to the front, tried again when it is
        --inflight_;
        queue_.push_front(std::move(m));
        queued_ = queue_.size();
        connected_ = false;
      }
    }
  }

  // Reads and writes the connection; when it is down, connects again after 1, 2, 4 ... 30 s
  // (libmosquitto's own loop thread does not retry a connection that never came up).
  void networkLoop() {
    double delay = 1;
    while (!stopping_) {
      if (socketUp_) {
        int rc = mosquitto_loop(mosq_, 100, 1);
        if (rc == MOSQ_ERR_SUCCESS) {
          delay = 1;
          continue;
        }
        socketUp_ = false;
        if (rc == MOSQ_ERR_TLS) {  // the handshake goes on inside the loop: a certificate refused shows here
          spdlog::error("mqtt: TLS with the broker failed (its certificate, or ours, was refused)");
          std::lock_guard lock(mutex_);
          tlsFailed_ = true;
        }
        onDisconnect(MOSQ_ERR_CONN_LOST);
      } else if (mosquitto_reconnect(mosq_) == MOSQ_ERR_SUCCESS) {
        socketUp_ = true;  // the broker's answer comes through mosquitto_loop (onConnect)
        continue;
      }
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::duration<double>(delay), [&] { return stopping_.load(); });
      delay = std::min(delay * 2, 30.0);
    }
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (publisher_.joinable()) publisher_.join();
    if (network_.joinable()) network_.join();
    if (!mosq_) return;
    if (socketUp_) {  // a clean goodbye: the broker keeps the will to itself
      mosquitto_disconnect(mosq_);
      mosquitto_loop(mosq_, 100, 1);
    }
    mosquitto_destroy(mosq_);
    mosq_ = nullptr;
  }

  Params p_;
  std::string pipeline_, host_, clientId_;
  std::pair<std::string, std::string> user_;
  std::vector<std::string> inputs_;
  mosquitto* mosq_ = nullptr;
  std::atomic<bool> socketUp_{false};
  std::thread publisher_, network_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Message> queue_;
  int inflight_ = 0;
  bool connected_ = false, answered_ = false, tlsFailed_ = false;
  std::atomic<bool> stopping_{false};
  int refused_ = 0;
  std::atomic<uint64_t> published_{0}, dropped_{0}, queued_{0}, connectedGauge_{0}, connections_{0};
};

}  // namespace

void registerMqttSink(Registry& registry) {
  registry.add<MqttSink>(Role::sink, "mqtt",
                         "each frame's detections (as the detections file's lines) and the metrics summary to an "
                         "MQTT broker; never stalls the graph (a bounded queue while it reconnects)");
}

}  // namespace pp::mqtt
