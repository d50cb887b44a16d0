// The mqtt sink against a real mosquitto broker on loopback (an ephemeral port), started by the
// test, and a subscriber in the test: every frame's message equal to the detections file's line,
// the broker restarted mid-run without the graph stalling, a refused login and a TLS mismatch.
#include <arpa/inet.h>
#include <mosquitto.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/process_support.hpp"

namespace pp {
namespace {

int freePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  bool ok = bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
            getsockname(s, reinterpret_cast<sockaddr*>(&a), &n) == 0;
  close(s);
  EXPECT_TRUE(ok) << "no free port on 127.0.0.1";
  return ntohs(a.sin_port);
}

bool accepts(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(s);
  return ok;
}

// mosquitto from Debian (tools/setup --tests installs it), listening on 127.0.0.1 only.
class Broker {
 public:
  explicit Broker(std::string extra = "") : port_(freePort()), extra_(std::move(extra)) { start(); }
  ~Broker() { stop(); }
  void start() {
    std::string conf = dir_ / "mosquitto.conf";
    // As root, mosquitto would switch to the user mosquitto, who cannot read the test's folder.
    std::ofstream(conf) << "user " << (getuid() == 0 ? "root" : "mosquitto") << "\nlistener " << port_
                        << " 127.0.0.1\npersistence true\npersistence_location " << dir_.path().string() << "/\n"
                        << (extra_.find("allow_anonymous") == std::string::npos ? "allow_anonymous true\n" : "")
                        << extra_;
    child_ = spawn({"/usr/sbin/mosquitto", "-c", conf}, dir_);
    for (int i = 0; i < 250 && !accepts(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(accepts(port_)) << "mosquitto did not start:\n" << slurp(child_.err);
  }
  void stop() {
    if (child_.pid <= 0) return;
    kill(child_.pid, SIGTERM);
    waitFor(child_, std::chrono::seconds(10));
    child_.pid = -1;
  }
  int port() const { return port_; }
  const test::TempDir& dir() const { return dir_; }

 private:
  test::TempDir dir_;
  int port_;
  std::string extra_;
  Child child_;
};

// Subscribes to everything with a persistent session (QoS 1), so that what the broker takes while
// it is disconnected waits for it; reconnects by itself.
class Subscriber {
 public:
  explicit Subscriber(int port) {
    mosquitto_lib_init();
    mosq_ = mosquitto_new("polarpipe-test-subscriber", false, this);
    mosquitto_connect_callback_set(mosq_, [](mosquitto* m, void*, int rc) {
      if (rc == 0) mosquitto_subscribe(m, nullptr, "#", 1);
    });
    mosquitto_message_callback_set(mosq_, [](mosquitto*, void* self, const mosquitto_message* msg) {
      auto* me = static_cast<Subscriber*>(self);
      std::lock_guard lock(me->mutex_);
      me->messages_.emplace_back(
          msg->topic, std::string(static_cast<const char*>(msg->payload), static_cast<size_t>(msg->payloadlen)));
    });
    mosquitto_reconnect_delay_set(mosq_, 1, 1, false);
    EXPECT_EQ(mosquitto_connect(mosq_, "127.0.0.1", port, 30), MOSQ_ERR_SUCCESS);
    mosquitto_loop_start(mosq_);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // subscribed
  }
  ~Subscriber() {
    mosquitto_disconnect(mosq_);
    mosquitto_loop_stop(mosq_, false);
    mosquitto_destroy(mosq_);
  }
  std::vector<std::pair<std::string, std::string>> messages() {
    std::lock_guard lock(mutex_);
    return messages_;
  }
  std::vector<std::string> on(const std::string& topic) {
    std::vector<std::string> out;
    for (const auto& [t, payload] : messages())
      if (t == topic) out.push_back(payload);
    return out;
  }
  // Waits until `done` holds for the messages so far, at most `seconds`.
  template <class F> void waitUntil(F done, int seconds) {
    for (int i = 0; i < seconds * 50 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

 private:
  mosquitto* mosq_;
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::string>> messages_;
};

// A config named run.yaml (so its topics are polarpipe/run/...): faces in a picture `frames` times
// at `fps` (0: as fast as it goes), into a detections file and the mqtt sink with `params`.
std::string writeConfig(const test::TempDir& dir, double fps, const std::string& params) {
  std::string path = dir / "run.yaml";
  std::ofstream(path) << "sources:\n  - {name: pictures, type: images, params: {path: " << test::picture("messi5.jpg")
                      << ", grey: true, loop: true, fps: " << fps << "}}\n"
                      << "stages:\n  - {name: faces, type: face_detect, inputs: {image: pictures.image}, "
                         "params: {min_size: 30}}\n"
                      << "sinks:\n  - {name: boxes, type: detections, inputs: {faces: faces.faces}, params: {path: "
                      << dir / "faces.jsonl"
                      << "}}\n"
                      << "  - {name: bus, type: mqtt, inputs: {faces: faces.faces}, params: {" << params << "}}\n"
                      << "metrics: {interval_s: 0.2}\n";
  return path;
}

std::vector<std::string> lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A counter from the run's end-of-run table (on stderr).
uint64_t counter(const std::string& output, const std::string& name) {
  std::smatch m;
  std::regex pattern(name + " ([0-9]+)");
  return std::regex_search(output, m, pattern) ? std::stoull(m[1]) : ~uint64_t{0};
}

const char* kDetections = "polarpipe/run/pictures/detections";

// Each frame's message is the detections file's line for it, in order; the metrics come on their
// topic; the retained status says offline after a clean stop.
TEST(Mqtt, EveryFrameIsPublishedAsTheDetectionsFileHasIt) {
  Broker broker;
  Subscriber subscriber(broker.port());
  test::TempDir dir;
  std::string config = writeConfig(dir, 0, "port: " + std::to_string(broker.port()));
  Child run = spawn({binary(), "run", config, "--frames", "20"}, dir);
  ASSERT_EQ(waitFor(run, std::chrono::seconds(120)), 0) << slurp(run.err);
  subscriber.waitUntil([&] { return subscriber.on("polarpipe/run/status").size() >= 2; }, 10);

  std::vector<std::string> file = lines(dir / "faces.jsonl"), published = subscriber.on(kDetections);
  ASSERT_EQ(file.size(), 20u);
  EXPECT_EQ(published, file);
  EXPECT_GT(nlohmann::json::parse(file.front())["faces"].size(), 0u) << "messi5's face, found";
  std::vector<std::string> metrics = subscriber.on("polarpipe/run/metrics");
  ASSERT_FALSE(metrics.empty());
  nlohmann::json last = nlohmann::json::parse(metrics.back());
  EXPECT_EQ(last["pipeline"], "run");
  EXPECT_TRUE(last["counters"].contains("bus.mqtt_published")) << last.dump();
  EXPECT_EQ(subscriber.on("polarpipe/run/status"), (std::vector<std::string>{"online", "offline"}));
  EXPECT_EQ(counter(slurp(run.err), "mqtt_dropped"), 0u) << slurp(run.err);
}

// The broker stopped for two seconds mid-run and started again: frames go on finishing meanwhile
// (the graph does not wait for the broker), the sink reconnects, and every frame's message arrives
// after all (the queue held them) or is counted as dropped.
TEST(Mqtt, TheBrokerGoingAwayNeverStallsTheGraph) {
  Broker broker;
  Subscriber subscriber(broker.port());
  test::TempDir dir;
  std::string config = writeConfig(dir, 10, "port: " + std::to_string(broker.port()));
  Child run = spawn({binary(), "run", config, "--frames", "50"}, dir);
  // The broker goes away once the sink is connected (its status says online), not after a fixed
  // time: on a loaded machine the sink's first try can miss, and its retry come after the stop.
  subscriber.waitUntil([&] { return !subscriber.on("polarpipe/run/status").empty(); }, 60);
  ASSERT_FALSE(subscriber.on("polarpipe/run/status").empty()) << "the sink never connected";
  broker.stop();
  size_t before = lines(dir / "faces.jsonl").size();
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  EXPECT_GT(lines(dir / "faces.jsonl").size(), before) << "frames kept finishing while the broker was away";
  broker.start();
  ASSERT_EQ(waitFor(run, std::chrono::seconds(240)), 0) << slurp(run.err);
  subscriber.waitUntil([&] { return subscriber.on("polarpipe/run/status").size() >= 2; }, 10);

  std::string out = slurp(run.err);
  std::set<uint64_t> frames;
  for (const std::string& message : subscriber.on(kDetections))
    frames.insert(nlohmann::json::parse(message)["frame"].get<uint64_t>());
  uint64_t dropped = counter(out, "mqtt_dropped");
  ASSERT_NE(dropped, ~uint64_t{0}) << out;
  EXPECT_EQ(frames.size() + dropped, 50u) << out;
  EXPECT_TRUE(frames.count(49)) << "messages resumed after the broker came back";
  EXPECT_GE(counter(out, "mqtt_connections"), 2u) << out;
  EXPECT_NE(out.find("lost the broker"), std::string::npos) << out;
}

// With no detections input the sink sends the metrics and the status alone, no message a frame.
TEST(Mqtt, WithoutInputsOnlyTheMetricsAndTheStatusArePublished) {
  Broker broker;
  Subscriber subscriber(broker.port());
  test::TempDir dir;
  std::string config = dir / "run.yaml";
  std::ofstream(config) << "sources:\n  - {name: pictures, type: images, params: {path: " << test::picture("messi5.jpg")
                        << ", loop: true, fps: 20}}\n"
                        << "sinks:\n  - {name: files, type: image_writer, inputs: {v: pictures.image}, params: {dir: "
                        << dir / "frames"
                        << "}}\n  - {name: bus, type: mqtt, params: {port: " << broker.port()
                        << "}}\nmetrics: {interval_s: 0.1}\n";
  Child run = spawn({binary(), "run", config, "--frames", "10"}, dir);
  ASSERT_EQ(waitFor(run, std::chrono::seconds(60)), 0) << slurp(run.err);
  subscriber.waitUntil([&] { return subscriber.on("polarpipe/run/status").size() >= 2; }, 10);
  EXPECT_FALSE(subscriber.on("polarpipe/run/metrics").empty());
  EXPECT_EQ(subscriber.on("polarpipe/run/status"), (std::vector<std::string>{"online", "offline"}));
  for (const auto& [topic, payload] : subscriber.messages())
    EXPECT_EQ(topic.find("detections"), std::string::npos) << topic << ": " << payload;
}

// A full queue while the broker is away drops the oldest messages and counts them.
TEST(Mqtt, AFullQueueDropsTheOldestAndCountsThem) {
  test::TempDir dir;
  std::string config = writeConfig(dir, 0, "port: " + std::to_string(freePort()) + ", queue: 5, metrics_topic: ''");
  Child run = spawn({binary(), "run", config, "--frames", "12"}, dir);
  ASSERT_EQ(waitFor(run, std::chrono::seconds(60)), 0) << slurp(run.err);
  EXPECT_EQ(counter(slurp(run.err), "mqtt_dropped"), 12u) << slurp(run.err);
  EXPECT_NE(slurp(run.err).find("is not reachable"), std::string::npos) << slurp(run.err);
}

// A login the broker refuses stops the run at once and says why.
TEST(Mqtt, AWrongPasswordIsAClearError) {
  test::TempDir dir;
  std::string passwords = dir / "passwords";
  Child make = spawn({"/usr/bin/mosquitto_passwd", "-b", "-c", passwords, "rig", "right"}, dir);
  ASSERT_EQ(waitFor(make, std::chrono::seconds(10)), 0) << slurp(make.err);
  Broker broker("allow_anonymous false\npassword_file " + passwords + "\n");
  std::ofstream(dir / "login") << "rig:wrong\n";
  std::string config =
      writeConfig(dir, 0, "port: " + std::to_string(broker.port()) + ", credentials: " + (dir / "login"));
  Child run = spawn({binary(), "run", config, "--frames", "3"}, dir);
  EXPECT_NE(waitFor(run, std::chrono::seconds(30)), 0);
  std::string err = slurp(run.err);
  EXPECT_NE(err.find("refused the connection"), std::string::npos) << err;
  EXPECT_NE(err.find("credentials"), std::string::npos) << err;

  std::ofstream(dir / "login") << "rig:right\n";
  Child good = spawn({binary(), "run", config, "--frames", "3"}, dir);
  EXPECT_EQ(waitFor(good, std::chrono::seconds(60)), 0) << slurp(good.err);
}

// TLS: the broker's certificate checked against ca_file. The right CA connects; another CA is a
// clear error, not a hang or a retry for ever.
TEST(Mqtt, TlsWithTheRightCaConnectsAndAMismatchIsAClearError) {
  test::TempDir dir;
  auto certificate = [&](const std::string& name) {
    Child c = spawn(
        {"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", dir / (name + ".key"), "-out", dir / (name + ".crt")},
        dir);
    ASSERT_EQ(waitFor(c, std::chrono::seconds(30)), 0) << slurp(c.err);
  };
  certificate("broker");
  certificate("stranger");
  Broker broker("allow_anonymous true\ncertfile " + (dir / "broker.crt") + "\nkeyfile " + (dir / "broker.key") + "\n");
  std::string port = "port: " + std::to_string(broker.port());

  std::string config = writeConfig(dir, 0, port + ", ca_file: " + (dir / "stranger.crt"));
  Child wrong = spawn({binary(), "run", config, "--frames", "3"}, dir);
  EXPECT_NE(waitFor(wrong, std::chrono::seconds(30)), 0);
  EXPECT_NE(slurp(wrong.err).find("TLS handshake"), std::string::npos) << slurp(wrong.err);

  config = writeConfig(dir, 0, port + ", ca_file: " + (dir / "broker.crt"));
  Child right = spawn({binary(), "run", config, "--frames", "3"}, dir);
  EXPECT_EQ(waitFor(right, std::chrono::seconds(60)), 0) << slurp(right.err);
  EXPECT_EQ(counter(slurp(right.err), "mqtt_dropped"), 0u) << slurp(right.err);
}

}  // namespace
}  // namespace pp
