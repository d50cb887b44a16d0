// The aravis source against Aravis' fake GigE Vision camera on loopback: frames bit for bit through
// the graph, packet loss, a camera that goes away and comes back, a stereo pair, clear errors.
#include <arpa/inet.h>
#include <arv.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "pipeline/aravis/frame_gaps.hpp"
#include "pipeline/aravis/software_trigger.hpp"
#include "pipeline/graph.hpp"
#include "pipeline/image_io.hpp"
#include "stages/demosaic/demosaic.hpp"
#include "stages/demosaic/synth.hpp"
#include "stages/register.hpp"
#include "tests/demosaic_support.hpp"
#include "tests/graph_support.hpp"
#include "tests/process_support.hpp"

namespace pp {
namespace {

constexpr int kWidth = 512, kHeight = 480;

// The frames a fake camera serves: raw colour polarization mosaics of a real picture (cropped to the
// region), each stamped with its index in the first 8 bytes.
const std::vector<Image>& mosaics() {
  static const std::vector<Image> all = [] {
    std::vector<Image> out;
    Image picture = readImage(test::picture("fruits.jpg"));
    for (int i = 0; i < 4; ++i) {
      demosaic::SynthOptions o;
      o.aolpOffset = i * 0.3;
      Image raw = demosaic::synthesize(picture, o).raw;
      Image crop({Depth::u8, 1}, kWidth, kHeight, MemoryKind::host);
      for (int y = 0; y < kHeight; ++y) std::memcpy(crop.view<uint8_t>().row(y), raw.view<uint8_t>().row(y), kWidth);
      out.push_back(std::move(crop));
    }
    return out;
  }();
  return all;
}

// What frame `index` holds, row by row.
std::vector<uint8_t> expectedFrame(uint64_t index) {
  const Image& m = mosaics()[index % mosaics().size()];
  std::vector<uint8_t> bytes(static_cast<size_t>(kWidth) * kHeight);
  for (int y = 0; y < kHeight; ++y)
    std::memcpy(bytes.data() + static_cast<size_t>(y) * kWidth, m.view<uint8_t>().row(y), kWidth);
  std::memcpy(bytes.data(), &index, sizeof index);
  return bytes;
}

// The packed formats the tests' camera offers: name, value (PFNC's, or the vendor's own as its SDK
// defines it: LUCID's Arena and The Imaging Source's IC4 headers), and how demosaic names the
// samples.
struct Packing {
  const char* name;
  ArvPixelFormat value;
  polar::RawFormat samples;
};
const std::vector<Packing>& packings() {
  static const std::vector<Packing> all = {
      {"Mono12p", 0x010C0047, polar::RawFormat::mono12p},
      {"BayerRG12p", 0x010C0059, polar::RawFormat::mono12p},
      {"Mono10p", 0x010A0046, polar::RawFormat::mono10p},
      {"Mono12Packed", 0x010C0006, polar::RawFormat::mono12packed},
      {"Mono10Packed", 0x010C0004, polar::RawFormat::mono10packed},
      {"PolarizeMono12p", 0x810C0047, polar::RawFormat::mono12p},             // LUCID
      {"PolarizeMono12Packed", 0x810C0006, polar::RawFormat::mono12packed},   // LUCID
      {"PolarizedMono12p", 0x810C000B, polar::RawFormat::mono12p},            // The Imaging Source
      {"PolarizedMono12Packed", 0x810C0010, polar::RawFormat::mono12packed},  // The Imaging Source
      {"PolarizedBayerBG12p", 0x810C000E, polar::RawFormat::mono12p}};        // The Imaging Source
  return all;
}
const Packing* packingOf(ArvPixelFormat value) {
  for (const Packing& p : packings())
    if (p.value == value) return &p;
  return nullptr;
}

// Frame `index` as 10 or 12-bit samples (the mosaic scaled up, a ramp in the low bits) packed as
// `format` packs them, width x height pixels of the mosaic.
std::vector<uint8_t> packedFrame(uint64_t index, int width, int height, polar::RawFormat format) {
  const Image& m = mosaics()[index % mosaics().size()];
  int low = polar::maxValue(format) == 1023 ? 2 : 4;
  Image samples({Depth::u16, 1}, width, height, MemoryKind::host);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      samples.view<uint16_t>().at(x, y) =
          static_cast<uint16_t>(m.view<uint8_t>().at(x % m.width(), y % m.height()) << low |
                                ((x + y + static_cast<int>(index)) & ((1 << low) - 1)));
  Image packed = test::packRaw(samples, format);
  std::vector<uint8_t> bytes;
  for (int y = 0; y < height; ++y)
    bytes.insert(bytes.end(), packed.view<uint8_t>().row(y), packed.view<uint8_t>().row(y) + packed.width());
  return bytes;
}

// Aravis' fake camera's GenICam XML with the packed formats of polarization cameras added to its
// PixelFormat (packings()); its PayloadSize formula already counts bits a pixel.
std::string polarizationCameraXmlText() {
  ArvFakeCamera* model = arv_fake_camera_new("model");
  size_t size = 0;
  std::string xml(arv_fake_camera_get_genicam_xml(model, &size));
  g_object_unref(model);
  std::string entries;
  for (const Packing& p : packings())
    entries += "<EnumEntry Name=\"" + std::string(p.name) + "\" NameSpace=\"" +
               (p.value & 0x80000000u ? "Custom" : "Standard") + "\"><Value>" + std::to_string(p.value) +
               "</Value></EnumEntry>";
  auto at = xml.find("<pValue>PixelFormatRegister</pValue>");
  EXPECT_NE(at, std::string::npos);
  xml.insert(at, entries);
  // IEEE 1588 as SFNC names it, on registers of the fake camera's memory the test writes to.
  auto reg = [](const std::string& name, const std::string& address, const std::string& sign = "Unsigned") {
    return "<IntReg Name=\"" + name + "\" NameSpace=\"Custom\"><Address>" + address +
           "</Address><Length>4</Length><AccessMode>RW</AccessMode><pPort>Device</pPort><Sign>" + sign +
           "</Sign><Endianess>BigEndian</Endianess></IntReg>";
  };
  std::string ptp =
      "<Boolean Name=\"PtpEnable\" "
      "NameSpace=\"Standard\"><pValue>PtpEnableRegister</pValue><OnValue>1</OnValue><OffValue>0</OffValue></Boolean>" +
      reg("PtpEnableRegister", "0x4000") +
      "<Command Name=\"PtpDataSetLatch\" "
      "NameSpace=\"Standard\"><pValue>PtpLatchRegister</pValue><CommandValue>1</CommandValue></Command>" +
      reg("PtpLatchRegister", "0x4004") +
      "<Enumeration Name=\"PtpStatus\" NameSpace=\"Standard\"><EnumEntry "
      "Name=\"Initializing\"><Value>0</Value></EnumEntry>"
      "<EnumEntry Name=\"Master\"><Value>1</Value></EnumEntry><EnumEntry Name=\"Slave\"><Value>2</Value></EnumEntry>"
      "<EnumEntry Name=\"Disabled\"><Value>3</Value></EnumEntry><pValue>PtpStatusRegister</pValue></Enumeration>" +
      reg("PtpStatusRegister", "0x4008") +
      "<Integer Name=\"PtpOffsetFromMaster\" NameSpace=\"Standard\"><pValue>PtpOffsetRegister</pValue></Integer>" +
      reg("PtpOffsetRegister", "0x400C", "Signed");
  at = xml.rfind("</RegisterDescription>");
  EXPECT_NE(at, std::string::npos);
  xml.insert(at, ptp);
  return xml;
}

std::string polarizationCameraXml(const test::TempDir& dir) {
  std::string path = dir / "polarization-camera.xml";
  std::ofstream(path) << polarizationCameraXmlText();
  return path;
}

// Chunk data as SFNC names it: ChunkModeActive, ChunkSelector and a ChunkEnable per selector, and
// two chunks after the image: 0x1001 holds ChunkFrameID (8 bytes) and ChunkExposureTime (a double),
// 0x1002 ChunkGain (a double) and ChunkLineStatusAll (4 bytes); all big-endian. PayloadSize counts
// them when chunk mode is on.
constexpr uint32_t kFrameChunk = 0x1001, kIoChunk = 0x1002, kImageChunk = 0xA5A5A5A5;
constexpr size_t kChunkBytes = 8 + (16 + 8) + (12 + 8);  // the image's chunk trailer, then each chunk and its trailer
std::string chunkCameraXml(const test::TempDir& dir) {
  std::string xml = polarizationCameraXmlText();
  auto reg = [](const std::string& name, const std::string& address, const std::string& port, int length,
                const std::string& extra = "") {
    return "<IntReg Name=\"" + name + "\" NameSpace=\"Custom\"><Address>" + address + "</Address>" + extra +
           "<Length>" + std::to_string(length) + "</Length><AccessMode>RW</AccessMode><pPort>" + port +
           "</pPort><Sign>Unsigned</Sign><Endianess>BigEndian</Endianess></IntReg>";
  };
  auto floatReg = [](const std::string& name, const std::string& address, const std::string& port) {
    return "<FloatReg Name=\"" + name + "\" NameSpace=\"Standard\"><Address>" + address +
           "</Address><Length>8</Length><AccessMode>RO</AccessMode><pPort>" + port +
           "</pPort><Endianess>BigEndian</Endianess></FloatReg>";
  };
  std::string chunks =
      "<Boolean Name=\"ChunkModeActive\" "
      "NameSpace=\"Standard\"><pValue>ChunkModeRegister</pValue><OnValue>1</OnValue><OffValue>0</OffValue></Boolean>" +
      reg("ChunkModeRegister", "0x4010", "Device", 4) +
      "<Enumeration Name=\"ChunkSelector\" NameSpace=\"Standard\"><EnumEntry "
      "Name=\"FrameID\"><Value>0</Value></EnumEntry>"
      "<EnumEntry Name=\"ExposureTime\"><Value>1</Value></EnumEntry><EnumEntry "
      "Name=\"Gain\"><Value>2</Value></EnumEntry>"
      "<EnumEntry "
      "Name=\"LineStatusAll\"><Value>3</Value></EnumEntry><pValue>ChunkSelectorRegister</pValue></Enumeration>" +
      reg("ChunkSelectorRegister", "0x4014", "Device", 4) +
      "<Boolean Name=\"ChunkEnable\" "
      "NameSpace=\"Standard\"><pValue>ChunkEnableRegister</pValue><OnValue>1</OnValue><OffValue>0</OffValue></"
      "Boolean>" +
      reg("ChunkEnableRegister", "0x4020", "Device", 4, "<pIndex Offset=\"4\">ChunkSelectorRegister</pIndex>") +
      "<Port Name=\"FrameChunkPort\" NameSpace=\"Custom\"><ChunkID>1001</ChunkID></Port>"
      "<Port Name=\"IoChunkPort\" NameSpace=\"Custom\"><ChunkID>1002</ChunkID></Port>" +
      reg("ChunkFrameID", "0", "FrameChunkPort", 8) + floatReg("ChunkExposureTime", "8", "FrameChunkPort") +
      floatReg("ChunkGain", "0", "IoChunkPort") + reg("ChunkLineStatusAll", "8", "IoChunkPort", 4);
  auto at = xml.rfind("</RegisterDescription>");
  xml.insert(at, chunks);
  std::string formula = "<Formula>WIDTH * HEIGHT * ((PIXELFORMAT>>16)&amp;0xFF) / 8</Formula>";
  at = xml.find(formula);
  EXPECT_NE(at, std::string::npos);
  xml.replace(at, formula.size(),
              "<pVariable Name=\"CHUNKS\">ChunkModeRegister</pVariable><Formula>WIDTH * HEIGHT * "
              "((PIXELFORMAT>>16)&amp;0xFF) / 8 + CHUNKS * " +
                  std::to_string(kChunkBytes) + "</Formula>");
  std::string path = dir / "chunk-camera.xml";
  std::ofstream(path) << xml;
  return path;
}

// An in-process fake camera serving expectedFrame(0), (1), ...
class FakeCamera {
 public:
  // genicam: another GenICam XML for the camera (as polarizationCameraXml() writes).
  FakeCamera(const std::string& address, const std::string& serial, double lostRatio = 0,
             const std::string& genicam = "") {
    camera_ = genicam.empty() ? arv_gv_fake_camera_new(address.c_str(), serial.c_str())
                              : arv_gv_fake_camera_new_full(address.c_str(), serial.c_str(), genicam.c_str());
    if (lostRatio > 0) g_object_set(camera_, "gvsp-lost-ratio", lostRatio, nullptr);
#if ARAVIS_CHECK_VERSION(0, 9, 0)  // aravis-0.10 also takes a destroy function for the data
    arv_fake_camera_set_fill_pattern(arv_gv_fake_camera_get_fake_camera(camera_), &FakeCamera::fill, this, nullptr);
#else
    arv_fake_camera_set_fill_pattern(arv_gv_fake_camera_get_fake_camera(camera_), &FakeCamera::fill, this);
#endif
  }
  ~FakeCamera() { g_object_unref(camera_); }
  bool running() const { return arv_gv_fake_camera_is_running(camera_); }
  bool softwareTriggered() const {
    return arv_fake_camera_is_in_software_trigger_mode(arv_gv_fake_camera_get_fake_camera(camera_));
  }
  ArvFakeCamera* model() const { return arv_gv_fake_camera_get_fake_camera(camera_); }

 private:
  static void fill(ArvBuffer* buffer, void* self, guint32, guint32, ArvPixelFormat format) {
    auto* fake = static_cast<FakeCamera*>(self);
    // The buffer's filled size is set after this call; its image size is known already.
    auto* data = static_cast<uint8_t*>(const_cast<void*>(arv_buffer_get_data(buffer, nullptr)));
    int width = arv_buffer_get_image_width(buffer), height = arv_buffer_get_image_height(buffer);
    if (const Packing* packing = packingOf(format)) {
      auto frame = packedFrame(fake->served_++, width, height, packing->samples);
      std::memcpy(data, frame.data(), frame.size());
      return;
    }
    size_t size = static_cast<size_t>(width) * static_cast<size_t>(height);
    auto frame = expectedFrame(fake->served_++);
    std::memcpy(data, frame.data(), std::min(size, frame.size()));
  }
  ArvGvFakeCamera* camera_;
  uint64_t served_ = 0;
};

// A camera that sends chunk data after each image. Aravis' fake camera answers the control channel
// (chunkCameraXml()) but sends no chunks, so it is held in software trigger mode, never triggered,
// and this class streams instead: GVSP (leader, payload packets, trailer) to the address the stream
// wrote into the camera, at about 100 frames a second, each frame expectedFrame(n) followed by its
// chunks. The values it sent are kept by the camera's frame id.
class ChunkCamera {
 public:
  struct Sent {
    double exposureUs, gain;
    uint32_t lines;
    uint64_t index;  // expectedFrame(index)
  };

  ChunkCamera(const std::string& address, const std::string& serial, const test::TempDir& dir)
      : fake_(address, serial, 0, chunkCameraXml(dir)) {
    arv_fake_camera_write_register(fake_.model(), ARV_FAKE_CAMERA_REGISTER_TRIGGER_MODE, 1);
    arv_fake_camera_write_register(fake_.model(), ARV_FAKE_CAMERA_REGISTER_TRIGGER_SOURCE, 1);  // Software
    socket_ = ::socket(AF_INET, SOCK_DGRAM, 0);
    thread_ = std::thread([this] { stream(); });
  }
  ~ChunkCamera() {
    stop_ = true;
    thread_.join();
    ::close(socket_);
  }
  std::map<uint64_t, Sent> sent() {
    std::lock_guard lock(mutex_);
    return sent_;
  }

 private:
  static void put32(std::vector<uint8_t>& out, uint32_t v) {
    for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<uint8_t>(v >> shift));
  }
  static void put64(std::vector<uint8_t>& out, uint64_t v) {
    put32(out, static_cast<uint32_t>(v >> 32));
    put32(out, static_cast<uint32_t>(v));
  }
  static void putDouble(std::vector<uint8_t>& out, double d) {
    uint64_t v;
    std::memcpy(&v, &d, sizeof v);
    put64(out, v);
  }
  // GVSP header: status 0, 16-bit block id, content type and packet id.
  static std::vector<uint8_t> header(uint16_t block, uint8_t content, uint32_t packet) {
    std::vector<uint8_t> out = {0, 0, static_cast<uint8_t>(block >> 8), static_cast<uint8_t>(block)};
    put32(out, (static_cast<uint32_t>(content) << 24) | (packet & 0xFFFFFF));
    return out;
  }
  uint32_t reg(uint32_t address) {
    guint32 value = 0;
    arv_fake_camera_read_register(fake_.model(), address, &value);
    return value;
  }

  void stream() {
    uint16_t block = 0;
    uint64_t index = 0;
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      GSocketAddress* address = arv_fake_camera_get_acquisition_status(fake_.model())
                                    ? arv_fake_camera_get_stream_address(fake_.model())
                                    : nullptr;
      if (!address) continue;
      sockaddr_in to{};
      bool ok = g_socket_address_to_native(address, &to, sizeof to, nullptr) && to.sin_port != 0;
      g_object_unref(address);
      if (!ok) continue;
      block = static_cast<uint16_t>(block % 0xFFFF + 1);  // 1 .. 65535: 0 is no block
      bool chunks = reg(0x4010) != 0;
      Sent values{1000.0 + block * 10, 0.5 * block, static_cast<uint32_t>(block & 15), index};
      std::vector<uint8_t> payload = expectedFrame(index++);
      if (chunks) {
        put32(payload, kImageChunk);
        put32(payload, static_cast<uint32_t>(payload.size() - 4));
        put64(payload, block), putDouble(payload, values.exposureUs), put32(payload, kFrameChunk), put32(payload, 16);
        putDouble(payload, values.gain), put32(payload, values.lines), put32(payload, kIoChunk), put32(payload, 12);
      }
      {
        std::lock_guard lock(mutex_);
        sent_[block] = values;
      }
      // Leader: flags, payload type (image, with chunks: the extended chunk bit), timestamp, pixel format, size,
      // offset, padding.
      std::vector<uint8_t> leader = header(block, 1, 0);
      leader.insert(leader.end(), {0, 0, static_cast<uint8_t>(chunks ? 0x40 : 0), 1});
      put64(leader, block * 10000000ull);
      for (uint32_t v : {reg(ARV_FAKE_CAMERA_REGISTER_PIXEL_FORMAT), static_cast<uint32_t>(kWidth),
                         static_cast<uint32_t>(kHeight), 0u, 0u, 0u})
        put32(leader, v);
      send(leader, to);
      size_t perPacket = (reg(0x0d04) & 0xFFFF) - 36;  // GevSCPSPacketSize less IP, UDP and GVSP headers
      uint32_t packet = 1;
      for (size_t offset = 0; offset < payload.size(); offset += perPacket, ++packet) {
        std::vector<uint8_t> data = header(block, 3, packet);
        data.insert(data.end(), payload.begin() + static_cast<long>(offset),
                    payload.begin() + static_cast<long>(std::min(payload.size(), offset + perPacket)));
        send(data, to);
      }
      std::vector<uint8_t> trailer = header(block, 2, packet);
      put32(trailer, 1);
      put32(trailer, kHeight);
      send(trailer, to);
    }
  }
  void send(const std::vector<uint8_t>& packet, const sockaddr_in& to) {
    ::sendto(socket_, packet.data(), packet.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }

  FakeCamera fake_;
  int socket_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::map<uint64_t, Sent> sent_;
  std::thread thread_;
};

Registry& registry() {
  static Registry r = [] {
    Registry reg;
    registerAllNodes(reg);
    reg.add<KeepSink>(Role::sink, "keep", "keeps frames");
    return reg;
  }();
  return r;
}

std::string cameraSource(const std::string& name, const std::string& camera, const std::string& extra = "",
                         const std::string& pixelFormat = "Mono8") {
  return "  - {name: " + name + ", type: aravis, params: {camera: '" + camera + "', pixel_format: " + pixelFormat +
         ", region: [0, 0, " + std::to_string(kWidth) + ", " + std::to_string(kHeight) +
         "], frame_rate: 100, packet_timeout_ms: 5, frame_retention_ms: 60, socket_buffer_kb: 4096" + extra + "}}\n";
}

// A u8 plane's pixels, row after row.
std::vector<uint8_t> bytesOf(const Image& image) {
  std::vector<uint8_t> bytes(static_cast<size_t>(image.width()) * image.height());
  for (int y = 0; y < image.height(); ++y)
    std::memcpy(bytes.data() + static_cast<size_t>(y) * image.width(), image.view<uint8_t>().row(y), image.width());
  return bytes;
}

uint64_t stampOf(const std::vector<uint8_t>& frame) {
  uint64_t index = 0;
  std::memcpy(&index, frame.data(), sizeof index);
  return index;
}

// Every frame's `port` plane is one the camera served, unchanged, and they come in order.
void expectServedFrames(Kept& r, const std::string& port, bool inOrder = true) {
  std::lock_guard lock(r.mutex);
  uint64_t previous = 0;
  for (size_t i = 0; i < r.planes.size(); ++i) {
    auto frame = bytesOf(r.planes[i].at(port));
    uint64_t stamp = stampOf(frame);
    auto expected = expectedFrame(stamp);
    size_t differ = 0, first = 0;
    for (size_t k = 0; k < expected.size(); ++k)
      if (frame[k] != expected[k] && !differ++) first = k;
    ASSERT_EQ(differ, 0u) << "frame " << i << " (camera frame " << stamp
                          << ") differs from what the camera served, first at byte " << first;
    if (i && inOrder) {
      EXPECT_GT(stamp, previous) << "frames arrive in order";
    }
    previous = stamp;
  }
}

uint64_t counter(Graph& graph, const std::string& name) {
  std::string table = graph.metrics().table();
  auto at = table.find(" " + name + " ");
  return at == std::string::npos ? 0 : std::stoull(table.substr(at + name.size() + 2));
}

// Whether `done` came true within `seconds` (checked every 20 ms).
bool waitUntil(const std::function<bool()>& done, int seconds) {
  for (int i = 0; i < seconds * 50 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return done();
}

TEST(Aravis, FramesArriveBitForBitThroughTheGraph) {
  FakeCamera fake("127.0.0.1", "PPTEST1");
  auto graph = buildGraph(
      registry(),
      "sources:\n" + cameraSource("cam", "PPTEST1", ", mosaic: polar_rggb") +
          "stages:\n  - {name: polar, type: demosaic, inputs: {raw: cam.raw}, params: {mosaic: polar_rggb, outputs: "
          "[s0]}}\n"
          "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw, s0: polar.s0}, params: {key: exact}}\n",
      120);
  ASSERT_TRUE(graph);
  graph->run();
  Kept& r = kept("exact");
  ASSERT_EQ(r.count(), 120u);
  expectServedFrames(r, "raw");
  EXPECT_EQ(r.metas[0].mosaic, "polar_rggb") << "the config names the sensor layout";
  EXPECT_EQ(r.metas[0].bitDepth, 8);
  EXPECT_GT(r.metas[1].cameraTimestampNs, r.metas[0].cameraTimestampNs);
  EXPECT_GE(counter(*graph, "camera_frames"), 120u) << graph->metrics().table();
}

TEST(Aravis, ADemosaicOfTheOtherSensorLayoutIsAClearError) {
  FakeCamera fake("127.0.0.1", "PPMOSAIC");
  auto graph = buildGraph(registry(),
                          "sources:\n" + cameraSource("cam", "PPMOSAIC") +  // Mono8: polar_mono
                              "stages:\n  - {name: polar, type: demosaic, inputs: {raw: cam.raw}, params: {mosaic: "
                              "polar_rggb, outputs: [s0]}}\n"
                              "sinks:\n  - {name: keep, type: keep, inputs: {s0: polar.s0}}\n",
                          5);
  ASSERT_TRUE(graph);
  try {
    graph->run();
    FAIL() << "a mono sensor's frames went through a colour demosaic";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("comes from a polar_mono sensor, but this stage demosaics polar_rggb"),
              std::string::npos)
        << e.what();
  }
}

TEST(Aravis, LostPacketsGiveCountedIncompleteFramesThatAreDroppedOrFlagged) {
  FakeCamera fake("127.0.0.1", "PPTEST2", 0.02);
  for (const std::string mode : {"drop", "pass"}) {
    auto graph = buildGraph(
        registry(),
        "sources:\n" +
            cameraSource("cam", "PPTEST2", ", packet_resend: false, packet_size: 8192, incomplete: " + mode) +
            "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}, params: {key: lossy_" + mode + "}}\n",
        40);
    ASSERT_TRUE(graph);
    graph->run();
    Kept& r = kept("lossy_" + mode);
    EXPECT_EQ(r.count(), 40u);
    EXPECT_GT(counter(*graph, "camera_incomplete"), 0u) << graph->metrics().table();
    EXPECT_GT(counter(*graph, "camera_missing_packets"), 0u) << graph->metrics().table();
    size_t flagged = 0;
    for (const auto& m : r.metas) flagged += m.incomplete;
    if (mode == "drop") {
      EXPECT_EQ(flagged, 0u);
      expectServedFrames(r, "raw");
    } else {
      EXPECT_GT(flagged, 0u) << "incomplete frames are passed on, flagged";
    }
  }
}

TEST(Aravis, ACameraThatGoesAwayIsReportedAndFramesResumeWhenItReturns) {
  auto fake = std::make_unique<FakeCamera>("127.0.0.1", "PPTEST3");
  auto graph = buildGraph(registry(),
                          "sources:\n" + cameraSource("cam", "PPTEST3") +
                              "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}, params: {key: replug}}\n");
  ASSERT_TRUE(graph);
  std::thread running([&] { graph->run(); });
  Kept& r = kept("replug");
  EXPECT_TRUE(waitUntil([&] { return r.count() >= 20; }, 10));
  fake.reset();  // unplugged
  std::this_thread::sleep_for(std::chrono::seconds(2));
  size_t before = r.count();
  fake = std::make_unique<FakeCamera>("127.0.0.1", "PPTEST3");
  EXPECT_TRUE(waitUntil([&] { return counter(*graph, "camera_reconnects") == 1; }, 30)) << graph->metrics().table();
  EXPECT_TRUE(waitUntil([&] { return r.count() >= before + 20; }, 10)) << "frames resume after the camera returns";
  graph->stop();
  running.join();
  expectServedFrames(r, "raw", false);  // the camera that came back numbers its frames from 0 again
}

// Loopback has one address for a GigE Vision fake camera; the right camera is Aravis' in-process
// fake interface camera, which serves its own test pattern at the same frame rate.
TEST(Aravis, TwoCamerasAreAStereoPairMatchedByArrival) {
  FakeCamera left("127.0.0.1", "PPLEFT");
  arv_enable_interface("Fake");
  // Free-running at 100 fps each, the nearest frames are at most 5 ms apart.
  auto graph = buildGraph(
      registry(),
      "pipeline: {pair_tolerance_ms: 6}\nsources:\n" + cameraSource("left", "PPLEFT") +
          cameraSource("right", "Fake_1") +
          "sinks:\n  - {name: keep, type: keep, inputs: {left: left.raw, right: right.raw}, params: {key: stereo}}\n",
      60);
  ASSERT_TRUE(graph);
  auto start = Clock::now();
  graph->run();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  arv_disable_interface("Fake");
  Kept& r = kept("stereo");
  ASSERT_EQ(r.count(), 60u);
  EXPECT_LT(seconds, 60 / 100.0 * 20)
      << "pairs come at about the cameras' rate, not after a wait each (20x leaves room for qemu and a loaded machine)";
  expectServedFrames(r, "left");
  for (const auto& planes : r.planes) EXPECT_EQ(planes.at("right").width(), kWidth);
  for (size_t i = 1; i < r.metas.size(); ++i) {
    auto gap = std::chrono::duration<double, std::milli>(r.metas[i].received - r.metas[i - 1].received).count();
    EXPECT_GT(gap, 0) << "one frame a pair";
  }
  EXPECT_NE(graph->metrics().table().find("unpaired"), std::string::npos);
}

TEST(Aravis, AMissingCameraOrARejectedSettingIsAClearError) {
  FakeCamera fake("127.0.0.1", "PPTEST5");
  struct Case {
    std::string extra, camera, expected;
  } cases[] = {
      {", startup_wait_s: 0", "NoSuchCamera", "no camera 'NoSuchCamera'"},
      {", features: {NoSuchFeature: 1}", "PPTEST5", "has no feature 'NoSuchFeature'"},
      {", features: {TriggerMode: Sideways}", "PPTEST5", "feature TriggerMode = 'Sideways' rejected"},
  };
  for (const auto& c : cases) {
    Diagnostics d("test.yaml");
    auto graph = buildGraph(registry(),
                            "sources:\n" + cameraSource("cam", c.camera, c.extra) +
                                "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}}\n",
                            d);
    EXPECT_FALSE(graph);
    EXPECT_NE(d.text().find(c.expected), std::string::npos) << d.text();
  }
  Diagnostics d("test.yaml");
  std::string yaml = "sources:\n" + cameraSource("cam", "PPTEST5", "", "Mono12p") +
                     "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}}\n";
  EXPECT_FALSE(buildGraph(registry(), yaml, d));
  EXPECT_NE(d.text().find("PixelFormat 'Mono12p' rejected"), std::string::npos) << d.text();
  EXPECT_NE(d.text().find("Aravis-Fake-PPTEST5"), std::string::npos) << "the error names the camera: " << d.text();
}

std::string runCli(const std::string& arguments, int& status) {
  FILE* out = popen((binary() + " " + arguments + " 2>&1").c_str(), "r");
  std::string text;
  char line[512];
  while (out && fgets(line, sizeof line, out)) text += line;
  status = out ? pclose(out) : -1;
  return text;
}

// trigger: software fires: the camera (free running it would send 100 frames/s) sends one frame a
// trigger, five a second, and the frames follow the triggers sent. Counted once frames flow: the fake
// camera keeps one pending trigger, so those sent before its stream ran (a slow sanitizer build)
// make one frame.
TEST(Aravis, SoftwareTriggersMakeTheFrames) {
  FakeCamera fake("127.0.0.1", "PPTRIG");
  auto graph = buildGraph(
      registry(), "sources:\n" + cameraSource("cam", "PPTRIG", ", trigger: software, trigger_rate_hz: 5") +
                      "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}, params: {key: triggered}}\n");
  ASSERT_TRUE(graph);
  std::thread running([&] { graph->run(); });
  for (int i = 0; i < 200 && counter(*graph, "camera_frames") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  uint64_t triggersBefore = counter(*graph, "camera_triggers"), framesBefore = counter(*graph, "camera_frames");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  uint64_t triggers = counter(*graph, "camera_triggers") - triggersBefore,
           frames = counter(*graph, "camera_frames") - framesBefore;
  graph->stop();
  running.join();
  EXPECT_GE(framesBefore, 1u) << "frames began: " << graph->metrics().table();
  EXPECT_GE(triggers, 12u) << graph->metrics().table();
  EXPECT_LE(triggers, 18u) << "paced at 5 a second: " << graph->metrics().table();
  EXPECT_LE(frames, triggers + 1) << "no frame without a trigger: " << graph->metrics().table();
  EXPECT_GE(frames + 1, triggers) << "a frame for each trigger: " << graph->metrics().table();
  expectServedFrames(kept("triggered"), "raw");
}

// One clock for a rig: every tick fires each acquiring camera of the group once, a camera without
// a free buffer holds the whole tick back (so the rig's frames stay in step), a camera that ends is
// not fired again, and a group fires at one rate.
TEST(SoftwareTrigger, FiresTheCamerasOfAGroupTogether) {
  struct Camera : aravis::TriggerTarget {
    std::atomic<bool> free{true};
    std::atomic<int> fired{0}, skipped{0};
    bool bufferFree() override { return free; }
    void fire() override { ++fired; }
    void skip() override { ++skipped; }
  } left, right;
  auto group = aravis::SoftwareTrigger::join("rig-test", 50);
  EXPECT_EQ(aravis::SoftwareTrigger::join("rig-test", 50), group) << "one clock for the group";
  EXPECT_THROW(aravis::SoftwareTrigger::join("rig-test", 40), std::invalid_argument);
  EXPECT_NE(aravis::SoftwareTrigger::join("", 50), group) << "no name: a camera alone";
  left.free = false;  // no tick fires the left camera alone before the right one begins
  group->begin(&left);
  group->begin(&right);
  left.free = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  right.free = false;  // the graph holds every buffer of the right camera
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int firedWhileFree = left.fired;
  group->end(&left);
  group->end(&right);
  right.free = true;
  int firedLeft = left.fired, firedRight = right.fired;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(left.fired, firedLeft) << "a camera that ended is not fired";
  EXPECT_GE(firedLeft, 15);
  EXPECT_LE(firedLeft, 40) << "about 25 ticks in 0.5 s at 50 Hz";
  EXPECT_EQ(firedLeft, firedRight) << "both cameras fired on every tick";
  EXPECT_EQ(firedLeft, firedWhileFree) << "no tick fired while one camera had no buffer";
  EXPECT_GE(right.skipped, 10) << "the held-back ticks are counted";
  EXPECT_GE(left.skipped, right.skipped) << "by every camera of the group";
}

// trigger: keep with a frame_rate keeps the trigger the camera was set up with (Aravis'
// arv_camera_set_frame_rate turns every trigger off).
TEST(Aravis, AFrameRateKeepsTheCamerasTrigger) {
  FakeCamera fake("127.0.0.1", "PPKEEP");
  {
    GError* error = nullptr;
    ArvCamera* camera = arv_camera_new("Aravis-Fake-PPKEEP", &error);
    ASSERT_TRUE(camera) << (error ? error->message : "");
    arv_camera_set_trigger(camera, "Software", &error);
    ASSERT_FALSE(error) << error->message;
    g_object_unref(camera);
  }
  ASSERT_TRUE(fake.softwareTriggered());
  auto graph = buildGraph(registry(), "sources:\n" + cameraSource("cam", "PPKEEP") +
                                          "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}}\n");
  ASSERT_TRUE(graph);
  EXPECT_TRUE(fake.softwareTriggered()) << "frame_rate: 100 with trigger: keep left the trigger on";
}

// A region offset off the mosaic's period, or binning, would change which polarizer angle lands
// where: refused, saying what to change.
TEST(Aravis, ALayoutThatBreaksThePolarizerPatternIsRefused) {
  FakeCamera fake("127.0.0.1", "PPLAYOUT");
  std::string yaml =
      "sources:\n" + cameraSource("cam", "PPLAYOUT") + "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}}\n";
  std::string shifted = yaml;
  shifted.replace(shifted.find("region: [0, 0, 512, 480]"), 24, "region: [1, 0, 508, 480]");
  Diagnostics d("test.yaml");
  EXPECT_FALSE(buildGraph(registry(), shifted, d));
  EXPECT_NE(d.text().find("region offset (1, 0) is not a multiple of 2, the polar_mono pattern's period"),
            std::string::npos)
      << d.text();
  std::string binned = yaml;
  binned.replace(binned.find("socket_buffer_kb: 4096"), 22, "socket_buffer_kb: 4096, features: {BinningHorizontal: 2}");
  Diagnostics b("test.yaml");
  EXPECT_FALSE(buildGraph(registry(), binned, b));
  EXPECT_NE(b.text().find("BinningHorizontal is 2: binning and decimation mix or skip polarizer pixels"),
            std::string::npos)
      << b.text();
}

// Frames lost whole on the network (leader, data and trailer: likely for a small frame of a few
// packets when half of all packets are lost) never reach the stream: the gaps in the camera's frame
// ids count them, beside the incomplete ones. Aravis' fake camera numbers its frames from 65401,
// so its 16-bit block ids wrap after a few hundred frames, and a frame that lost its leader comes
// back with its buffer's last id: neither may count as frames lost.
TEST(Aravis, FramesLostWholeAreCountedAsGaps) {
  FakeCamera fake("127.0.0.1", "PPGAPS", 0.5);
  std::string yaml = "sources:\n" + cameraSource("cam", "PPGAPS", ", packet_resend: false") +
                     "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}}\n";
  yaml.replace(yaml.find("region: [0, 0, 512, 480]"), 24, "region: [0, 0, 64, 48]");
  auto graph = buildGraph(registry(), yaml);
  ASSERT_TRUE(graph);
  std::thread running([&] { graph->run(); });
  // Until past the wrap (65535 to 1: 135 frames at 100 a second) with a complete frame and a gap seen;
  // under the sanitizers the first frames take seconds to come.
  const uint64_t wrapped = 400;
  waitUntil(
      [&] {
        const uint64_t frames = counter(*graph, "camera_frames");
        return frames + counter(*graph, "camera_incomplete") >= wrapped && frames > 0 &&
               counter(*graph, "camera_frame_gaps") > 0;
      },
      60);
  graph->stop();
  running.join();
  const uint64_t frames = counter(*graph, "camera_frames"), incomplete = counter(*graph, "camera_incomplete");
  const uint64_t gaps = counter(*graph, "camera_frame_gaps");
  EXPECT_GT(frames, 0u) << graph->metrics().table();
  EXPECT_GT(gaps, 0u) << graph->metrics().table();
  // A frame of a few packets loses all of them now and then (one in 2^n for n packets); the wrap
  // and the stale ids counted as gaps made tens of thousands.
  EXPECT_LT(gaps, (frames + incomplete) / 2) << graph->metrics().table();
}

// The gaps counted from the ids of the frames that arrived, as the Aravis source gives them.
TEST(AravisFrameGaps, CountsIdsThatNeverArrived) {
  aravis::FrameGaps g;
  for (uint64_t id : {10, 11, 14, 15, 16}) g.arrived(id, true);
  EXPECT_EQ(g.gaps(), 2u);  // 12 and 13
}

TEST(AravisFrameGaps, AFrameWithoutItsOwnIdTakesAPlaceOfTheNextGap) {
  aravis::FrameGaps g;
  g.arrived(10, true);
  g.arrived(0, false);   // a new buffer whose frame lost its leader (frame 11)
  g.arrived(10, false);  // a buffer that held frame 10, its frame (12) without a leader
  g.arrived(14, true);   // 13 never arrived
  EXPECT_EQ(g.gaps(), 1u);
  g.arrived(0, true);  // 0 is no frame's id, whatever the caller says
  g.arrived(16, true);
  EXPECT_EQ(g.gaps(), 1u);  // 15 arrived, numbered 0
}

TEST(AravisFrameGaps, BlockIdsThatWrapAreCountedAcrossTheWrap) {
  aravis::FrameGaps g;
  g.arrived(65533, true);
  g.arrived(65535, true);  // 65534 lost
  g.arrived(2, true);      // 1 lost (0 is not a block id)
  EXPECT_EQ(g.gaps(), 2u);
}

TEST(AravisFrameGaps, AnIdThatGoesBackStartsTheCountAgain) {
  aravis::FrameGaps g;
  g.arrived(5000, true);
  g.arrived(7, true);  // the camera restarted
  g.arrived(9, true);
  EXPECT_EQ(g.gaps(), 1u);
  g.restart();  // a new stream
  g.arrived(100, true);
  EXPECT_EQ(g.gaps(), 1u);
}

// A camera that comes back set up differently (its own default size, where the config left the
// region to the camera) is refused with both sizes named; the graph's buffers fit the first one.
TEST(Aravis, ACameraThatComesBackWithAnotherSizeIsRefused) {
  auto fake = std::make_unique<FakeCamera>("127.0.0.1", "PPSIZE");
  {
    GError* error = nullptr;
    ArvCamera* camera = arv_camera_new("Aravis-Fake-PPSIZE", &error);
    ASSERT_TRUE(camera) << (error ? error->message : "");
    arv_camera_set_region(camera, 0, 0, 512, 480, &error);
    ASSERT_FALSE(error) << error->message;
    g_object_unref(camera);
  }
  std::string yaml =
      "sources:\n" + cameraSource("cam", "PPSIZE") + "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}}\n";
  yaml.replace(yaml.find(", region: [0, 0, 512, 480]"), 26, "");
  auto graph = buildGraph(registry(), yaml);
  ASSERT_TRUE(graph);
  std::string failure;
  std::thread running([&] {
    try {
      graph->run();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  fake.reset();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  fake = std::make_unique<FakeCamera>("127.0.0.1", "PPSIZE");  // 512x512, its default
  for (int i = 0; i < 300 && failure.empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (failure.empty()) graph->stop();
  running.join();
  EXPECT_NE(failure.find("came back with 512x512 mono8 frames, but the graph was built for 512x480 mono8"),
            std::string::npos)
      << failure;
}

// A camera source (`source`) through a demosaic with `params` for `frames` frames: each frame's raw
// plane and `outputs`, kept under `key`.
std::vector<std::map<std::string, Image>> demosaicedFrames(const std::string& source, const std::string& params,
                                                           const std::vector<std::string>& outputs,
                                                           const std::string& key, int frames) {
  std::string list, inputs = "raw: cam.raw";
  for (const std::string& o : outputs) list += (list.empty() ? "" : ", ") + o, inputs += ", " + o + ": polar." + o;
  std::string yaml = "sources:\n" + source +
                     "stages:\n  - {name: polar, type: demosaic, inputs: {raw: cam.raw}, params: {" + params +
                     ", outputs: [" + list + "]}}\nsinks:\n  - {name: keep, type: keep, inputs: {" + inputs +
                     "}, params: {key: " + key + "}}\n";
  auto graph = buildGraph(registry(), yaml, frames);
  EXPECT_TRUE(graph);
  if (!graph) return {};
  graph->run();
  Kept& k = kept(key);
  std::lock_guard lock(k.mutex);
  return std::move(k.planes);  // the key is the caller's alone
}

// A camera whose frames say how to read them (sample format, Bayer phase, angle order): a demosaic
// with the `wrong` params stops at the first frame with `message`; with the `right` ones three frames
// go through.
void expectDemosaicNeeds(const std::string& source, const std::string& wrong, const std::string& right,
                         const std::string& message) {
  auto yaml = [&](const std::string& params) {
    return "sources:\n" + source + "stages:\n  - {name: polar, type: demosaic, inputs: {raw: cam.raw}, params: {" +
           params +
           ", outputs: [s0]}}\nsinks:\n  - {name: keep, type: keep, inputs: {s0: polar.s0}, params: {key: "
           "demosaic-needs}}\n";
  };
  auto stopping = buildGraph(registry(), yaml(wrong), 3);
  ASSERT_TRUE(stopping);
  try {
    stopping->run();
    ADD_FAILURE() << "demosaic {" << wrong << "} read frames that say otherwise";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
  stopping.reset();
  auto running = buildGraph(registry(), yaml(right), 3);
  ASSERT_TRUE(running);
  EXPECT_NO_THROW(running->run());
  EXPECT_EQ(kept("demosaic-needs").count(), 3u);
}

// Packed frames (10 and 12 bits, PFNC's and GigE Vision's packing) land packed in the graph's
// buffers and demosaic unpacks them as it reads: the camera path's output equals the demosaic of the
// same bytes from memory (as from a file); a demosaic set for other samples stops, saying which.
TEST(Aravis, PackedFramesAreDemosaicedAsTheyCome) {
  test::TempDir dir;
  FakeCamera fake("127.0.0.1", "PPPACKED", 0, polarizationCameraXml(dir));
  // Every mono packing the camera offers, under PFNC's names and LUCID's and The Imaging Source's own
  // (the colour ones: ColourFormatsTakeTheirBayerPhaseFromTheName).
  for (const Packing& packing : packings()) {
    const std::string camera = packing.name;
    if (camera.find("Bayer") != std::string::npos) continue;
    SCOPED_TRACE(camera);
    polar::RawFormat format = packing.samples;
    const std::string& samples = demosaic::rawFormatName(format);
    std::string source = cameraSource("cam", "PPPACKED", ", mosaic: polar_mono", camera);
    auto planes = demosaicedFrames(source, "mosaic: polar_mono, pixel_format: " + samples, {"s0", "dolp"}, "packed", 4);
    ASSERT_EQ(planes.size(), 4u);
    demosaic::Settings settings;
    settings.format = format;
    settings.mosaic = polar::Mosaic::mono;
    int rowBytes = demosaic::rawPlaneWidth(format, kWidth);
    for (const auto& frame : planes) {
      const Image& raw = frame.at("raw");
      ASSERT_EQ(raw.width(), rowBytes);
      uint64_t index = 0;
      for (; index < 64 && std::memcmp(packedFrame(index, kWidth, kHeight, format).data(), raw.view<uint8_t>().row(0),
                                       static_cast<size_t>(rowBytes)) != 0;
           ++index) {
      }
      ASSERT_LT(index, 64u) << "the frame is one the camera packed";
      auto expected = demosaic::runToHost(settings, raw, {"s0", "dolp"}, false);
      EXPECT_TRUE(test::samePixels(expected.at("s0"), frame.at("s0")));
      EXPECT_TRUE(test::samePixels(expected.at("dolp"), frame.at("dolp")));
    }
    EXPECT_EQ(planes[0].at("s0").format(), (Format{Depth::u16, 1})) << "10 and 12-bit input keeps its precision";
  }
  std::string source = cameraSource("cam", "PPPACKED", ", mosaic: polar_mono", "Mono12Packed");
  expectDemosaicNeeds(source, "mosaic: polar_mono, pixel_format: mono12p",
                      "mosaic: polar_mono, pixel_format: mono12packed",
                      "the frame's samples are mono12packed (from the camera's pixel format), but this stage reads "
                      "mono12p (set pixel_format: mono12packed)");
}

// A 12-bit camera into an 8-bit stage: with depth keep, S0 is 16-bit and face_detect's input refuses
// it, saying what gives 8 bits; with depth u8 the graph runs, and its S0 is the demosaic of the
// samples' top 8 bits.
TEST(Aravis, TwelveBitFramesFeedEightBitStagesWithDepthU8) {
  test::TempDir dir;
  FakeCamera fake("127.0.0.1", "PPTWELVE", 0, polarizationCameraXml(dir));
  const std::string source = cameraSource("cam", "PPTWELVE", ", mosaic: polar_mono", "Mono12p");
  auto yaml = [&](const std::string& depth) {
    return "sources:\n" + source +
           "stages:\n  - {name: polar, type: demosaic, inputs: {raw: cam.raw}, params: {mosaic: polar_mono, "
           "pixel_format: mono12p, depth: " +
           depth +
           ", outputs: [s0]}}\n  - {name: faces, type: face_detect, inputs: {image: polar.s0}, params: {cascade: " +
           test::dataFile("cascades/haarcascade_frontalface_default.xml") +
           "}}\nsinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw, s0: polar.s0}, params: {key: twelve}}\n"
           "  - {name: found, type: detections, inputs: {faces: faces.faces}, params: {path: " +
           (dir / "faces.jsonl") + "}}\n";
  };
  Diagnostics refused("test.yaml");
  EXPECT_FALSE(buildGraph(registry(), yaml("keep"), refused, 2));
  EXPECT_NE(refused.text().find("but polar.s0 is u16x1 256x240 (demosaic's depth: u8 makes it u8)"), std::string::npos)
      << refused.text();
  auto graph = buildGraph(registry(), yaml("u8"), 2);
  ASSERT_TRUE(graph);
  graph->run();
  Kept& k = kept("twelve");
  std::lock_guard lock(k.mutex);
  ASSERT_EQ(k.planes.size(), 2u);
  demosaic::Settings top;
  top.format = polar::RawFormat::mono12p, top.mosaic = polar::Mosaic::mono, top.sampleShift = 4;
  for (const auto& frame : k.planes) {
    ASSERT_EQ(frame.at("s0").format(), (Format{Depth::u8, 1}));
    EXPECT_TRUE(test::samePixels(demosaic::runToHost(top, frame.at("raw"), {"s0"}, false).at("s0"), frame.at("s0")));
  }
  std::ifstream detections(dir / "faces.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(detections, line)) ++lines;
  EXPECT_EQ(lines, 2) << "face_detect ran on every frame";
}

// Colour polarization sensors under PFNC's name and The Imaging Source's own (PolarizedBayerBG12p,
// its IC4 value): the Bayer phase comes from the name, the frames land packed, and the camera path's
// demosaic equals the demosaic of the same bytes read with that phase; a demosaic set for the other
// phase stops, saying which.
TEST(Aravis, ColourFormatsTakeTheirBayerPhaseFromTheName) {
  test::TempDir dir;
  FakeCamera fake("127.0.0.1", "PPCOLOUR", 0, polarizationCameraXml(dir));
  for (auto [camera, phase] : {std::pair{"BayerRG12p", "rggb"}, {"PolarizedBayerBG12p", "bggr"}}) {
    SCOPED_TRACE(camera);
    std::string source = cameraSource("cam", "PPCOLOUR", ", mosaic: polar_rggb", camera);
    auto planes = demosaicedFrames(
        source, std::string("mosaic: polar_rggb, bayer: ") + phase + ", pixel_format: mono12p", {"s0"}, "colour", 3);
    ASSERT_EQ(planes.size(), 3u);
    demosaic::Settings settings;
    settings.format = polar::RawFormat::mono12p;
    settings.mosaic = polar::Mosaic::rggb;
    if (std::string(phase) == "bggr") {
      const uint8_t bggr[4] = {polar::B, polar::G, polar::G, polar::R};
      std::copy_n(bggr, 4, settings.layout.colourAt);
    }
    for (const auto& frame : planes) {
      auto expected = demosaic::runToHost(settings, frame.at("raw"), {"s0"}, false);
      EXPECT_TRUE(test::samePixels(expected.at("s0"), frame.at("s0")));
    }
  }
  std::string source = cameraSource("cam", "PPCOLOUR", ", mosaic: polar_rggb", "PolarizedBayerBG12p");
  expectDemosaicNeeds(source, "mosaic: polar_rggb, pixel_format: mono12p",
                      "mosaic: polar_rggb, bayer: bggr, pixel_format: mono12p",
                      "the camera's 2x2 blocks are bggr (from its pixel format), but this stage reads them as rggb "
                      "(set bayer: bggr)");
}

// ptp: true switches IEEE 1588 on and reports the clock's state and offset; a camera without it is
// a clear error; pairing two cameras by timestamp refuses a camera whose clock is its own.
TEST(Aravis, PtpIsSwitchedOnReportedAndRequiredForPairingByTimestamp) {
  test::TempDir dir;
  FakeCamera fake("127.0.0.1", "PPPTP", 0, polarizationCameraXml(dir));
  arv_fake_camera_write_register(fake.model(), 0x4008, 2);  // Slave
  arv_fake_camera_write_register(fake.model(), 0x400C, static_cast<guint32>(-250));
  auto graph = buildGraph(registry(),
                          "sources:\n" + cameraSource("cam", "PPPTP", ", ptp: true") +
                              "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}}\n",
                          20);
  ASSERT_TRUE(graph);
  guint32 enabled = 0;
  arv_fake_camera_read_register(fake.model(), 0x4000, &enabled);
  EXPECT_EQ(enabled, 1u) << "PtpEnable set";
  graph->run();
  EXPECT_EQ(counter(*graph, "camera_ptp_locked"), 1u) << graph->metrics().table();
  EXPECT_EQ(counter(*graph, "camera_ptp_offset_ns"), 250u) << graph->metrics().table();
  EXPECT_NE(graph->metrics().prometheus().find("# TYPE polarpipe_camera_ptp_locked gauge"), std::string::npos);
  graph.reset();  // lets go of the camera

  arv_enable_interface("Fake");
  Diagnostics noPtp("test.yaml");
  EXPECT_FALSE(buildGraph(registry(),
                          "sources:\n" + cameraSource("cam", "Fake_1", ", ptp: true") +
                              "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}}\n",
                          noPtp));
  EXPECT_NE(noPtp.text().find("has neither PtpEnable nor GevIEEE1588"), std::string::npos) << noPtp.text();
  Diagnostics pairing("test.yaml");
  EXPECT_FALSE(buildGraph(registry(),
                          "pipeline: {pair_by: camera_timestamp}\nsources:\n" +
                              cameraSource("left", "PPPTP", ", ptp: true") + cameraSource("right", "Fake_1") +
                              "sinks:\n  - {name: keep, type: keep, inputs: {l: left.raw, r: right.raw}}\n",
                          pairing));
  arv_disable_interface("Fake");
  EXPECT_NE(
      pairing.text().find("sources.right: pipeline.pair_by is camera_timestamp, but this camera's clock is its own"),
      std::string::npos)
      << pairing.text();
  EXPECT_EQ(pairing.text().find("sources.left:"), std::string::npos) << "the PTP camera is fine: " << pairing.text();
}

// chunk_data: on: each frame's frame id, exposure, gain and line status come from its own chunks
// (the image itself unharmed by the chunk bytes after it), go into the detections file with the frame,
// and survive a recording and its replay.
TEST(Aravis, ChunkDataGivesEachFrameItsOwnMetadata) {
  test::TempDir dir;
  ChunkCamera camera("127.0.0.1", "PPCHUNK", dir);
  std::string recording = dir / "raw.mkv", detections = dir / "faces.jsonl";
  auto graph =
      buildGraph(registry(),
                 "sources:\n" + cameraSource("cam", "PPCHUNK", ", chunk_data: on") +
                     "stages:\n  - {name: faces, type: face_detect, inputs: {image: cam.raw}, params: {cascade: " +
                     test::dataFile("cascades/haarcascade_frontalface_default.xml") + "}}\n" +
                     "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}, params: {key: chunks}}\n"
                     "  - {name: rec, type: record, inputs: {raw: cam.raw}, params: {path: '" +
                     recording +
                     "'}}\n"
                     "  - {name: out, type: detections, inputs: {faces: faces.faces}, params: {path: '" +
                     detections + "'}}\n",
                 20);
  ASSERT_TRUE(graph);
  graph->run();
  auto sent = camera.sent();
  Kept& k = kept("chunks");
  ASSERT_EQ(k.count(), 20u) << graph->metrics().table();
  expectServedFrames(k, "raw");
  auto expectSent = [&](const FrameMeta& m, const std::string& where) {
    ASSERT_TRUE(sent.count(m.cameraFrameId)) << where << ": frame id " << m.cameraFrameId << " was never sent";
    const ChunkCamera::Sent& s = sent.at(m.cameraFrameId);
    EXPECT_EQ(m.exposureUs, s.exposureUs) << where;
    EXPECT_EQ(m.gain, s.gain) << where;
    ASSERT_EQ(m.chunks.count("ChunkLineStatusAll"), 1u) << where;
    EXPECT_EQ(m.chunks.at("ChunkLineStatusAll"), s.lines) << where;
  };
  std::set<double> exposures;
  {
    std::lock_guard lock(k.mutex);
    for (size_t i = 0; i < k.metas.size(); ++i) {
      expectSent(k.metas[i], "frame " + std::to_string(i));
      EXPECT_EQ(sent.at(k.metas[i].cameraFrameId).index, stampOf(bytesOf(k.planes[i].at("raw"))))
          << "the metadata is this frame's";
      exposures.insert(k.metas[i].exposureUs);
    }
  }
  EXPECT_EQ(exposures.size(), 20u) << "each frame its own exposure, not one read at start";
  EXPECT_EQ(counter(*graph, "camera_chunk_errors"), 0u);

  std::ifstream lines(detections);
  std::string line;
  size_t written = 0;
  while (std::getline(lines, line)) {
    auto json = nlohmann::json::parse(line);
    FrameMeta m;
    m.cameraFrameId = json.at("camera_frame_id").get<uint64_t>();
    m.exposureUs = json.at("exposure_us").get<double>();
    m.gain = json.at("gain").get<double>();
    m.chunks = json.at("chunks").get<std::map<std::string, double>>();
    expectSent(m, "detections line " + std::to_string(written++));
  }
  EXPECT_EQ(written, 20u);

  auto replay = buildGraph(
      registry(), "sources: [{name: cam, type: replay, params: {path: '" + recording +
                      "', pace: fast}}]\n"
                      "sinks:\n  - {name: keep, type: keep, inputs: {raw: cam.raw}, params: {key: chunks-replayed}}\n");
  ASSERT_TRUE(replay);
  replay->run();
  Kept& replayed = kept("chunks-replayed");
  ASSERT_EQ(replayed.count(), 20u);
  std::lock_guard lock(replayed.mutex);
  for (size_t i = 0; i < replayed.metas.size(); ++i) {
    expectSent(replayed.metas[i], "replayed frame " + std::to_string(i));
    EXPECT_EQ(replayed.metas[i].angles, (std::vector<int>{90, 45, 135, 0}))
        << "the sensor's angle order is recorded too";
  }
}

// A colour camera's Bayer phase comes from its pixel format (BayerBG8: bggr) into each frame; a
// demosaic that reads the blocks in another order stops with the setting to change, and with it set
// the frames go through.
TEST(Aravis, TheBayerPhaseComesFromThePixelFormat) {
  FakeCamera fake("127.0.0.1", "PPBAYER");
  std::string source = cameraSource("cam", "PPBAYER", ", mosaic: polar_rggb", "BayerBG8");
  expectDemosaicNeeds(
      source, "mosaic: polar_rggb", "mosaic: polar_rggb, bayer: bggr",
      "the camera's 2x2 blocks are bggr (from its pixel format), but this stage reads them as rggb (set bayer: bggr)");
}

// The sensor's angle order (the source's `angles`, the IMX250's by default) goes into each frame;
// a demosaic that reads another order stops with the setting to change, and with it set runs.
TEST(Aravis, TheAngleOrderGoesWithTheFrames) {
  FakeCamera fake("127.0.0.1", "PPANGLES");
  expectDemosaicNeeds(cameraSource("cam", "PPANGLES", ", mosaic: polar_mono, angles: [0, 45, 90, 135]"),
                      "mosaic: polar_mono", "mosaic: polar_mono, angles: [0, 45, 90, 135]",
                      "hold the polarizer angles [0, 45, 90, 135] (its source's angles), but this stage reads them as "
                      "[90, 45, 135, 0] (set angles: [0, 45, 90, 135])");
}

// validate touches no camera: with no camera on the network it passes, saying what only the camera
// could tell; with pixel_format and region in the config the graph is checked against them; with
// --camera it reads the camera (and a format the camera does not offer is an error), changing nothing.
TEST(Aravis, ValidateChecksACameraConfigWithoutTheCamera) {
  test::TempDir dir;
  std::string config = dir / "camera.yaml";
  std::ofstream(config) << "sources:\n  - {name: cam, type: aravis, params: {camera: PPVALID}}\n"
                           "stages:\n  - {name: polar, type: demosaic, inputs: {raw: cam.raw}, params: {mosaic: "
                           "polar_mono, outputs: [s0]}}\n"
                           "sinks:\n  - {name: out, type: image_writer, inputs: {s0: polar.s0}, params: {dir: out}}\n";
  int status = 0;
  std::string text = runCli("validate " + config, status);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("sources.cam: not checked: the frame's size and pixel format come from the camera"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("OK as far as it could be checked"), std::string::npos) << text;

  text = runCli("validate " + config +
                    " --set sources.cam.params.pixel_format=Mono8 --set 'sources.cam.params.region=[0, 0, 512, 480]'",
                status);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find(": OK"), std::string::npos) << text;
  EXPECT_NE(text.find("s0 [u8x1 256x240]"), std::string::npos)
      << "the graph checked against the declared size: " << text;

  // FLIR's names for the same raw sensor (Spinnaker): Polarized12p arrives packed, 1.5 bytes a pixel.
  text = runCli(
      "validate " + config +
          " --set sources.cam.params.pixel_format=Polarized12p --set 'sources.cam.params.region=[0, 0, 512, 480]'" +
          " --set stages.polar.params.pixel_format=mono12p",
      status);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("raw [u8x1 768x480]"), std::string::npos) << "the packed bytes as they come: " << text;
  EXPECT_NE(text.find("s0 [u16x1 256x240]"), std::string::npos) << text;

  // The Imaging Source's: the raw mosaic in GigE Vision's older 12-bit packing, 1.5 bytes a pixel.
  text = runCli("validate " + config +
                    " --set sources.cam.params.pixel_format=PolarizedMono12Packed --set "
                    "'sources.cam.params.region=[0, 0, 512, 480]' --set stages.polar.params.pixel_format=mono12packed",
                status);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("raw [u8x1 768x480]"), std::string::npos) << text;

  // Processed in the camera: Lucid's DoLP, The Imaging Source's AoLP/DoLP/intensity and four angles a pixel.
  for (const char* processed : {"PolarizedDolp_Mono8", "PolarizedADIMono8", "PolarizedQuadBG8"}) {
    text = runCli("validate " + config + " --set sources.cam.params.pixel_format=" + processed +
                      " --set 'sources.cam.params.region=[0, 0, 512, 480]'",
                  status);
    EXPECT_EQ(WEXITSTATUS(status), 2) << text;
    EXPECT_NE(text.find(std::string(processed) + " is processed in the camera"), std::string::npos)
        << "a processed format is never taken as a mosaic: " << text;
  }

  FakeCamera fake("127.0.0.1", "PPVALID");
  text = runCli("validate " + config + " --camera --set sources.cam.params.pixel_format=Mono12p", status);
  EXPECT_EQ(WEXITSTATUS(status), 2) << text;
  EXPECT_NE(text.find("does not offer PixelFormat 'Mono12p'"), std::string::npos) << text;
  text = runCli("validate " + config + " --camera --set sources.cam.params.chunk_data=on", status);
  EXPECT_EQ(WEXITSTATUS(status), 2) << text;
  EXPECT_NE(text.find("has no chunk data (no ChunkModeActive feature): set chunk_data: keep"), std::string::npos)
      << text;
  text = runCli(
      "validate " + config +
          " --camera --set sources.cam.params.pixel_format=Mono8 --set 'sources.cam.params.region=[0, 0, 512, 480]'",
      status);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find(": OK"), std::string::npos) << text;
}

// A PoE camera boots after the Jetson: `run` started 5 s before the camera waits for it (saying so)
// and then runs.
TEST(Aravis, RunWaitsForACameraThatIsNotThereYet) {
  test::TempDir dir;
  std::string config = dir / "camera.yaml";
  std::ofstream(config)
      << "sources:\n"
      << cameraSource("cam", "PPLATE")
      << "sinks:\n  - {name: out, type: image_writer, inputs: {raw: cam.raw}, params: {dir: frames}}\n";
  Child run = spawn({binary(), "run", config, "--frames", "10"}, dir);
  std::this_thread::sleep_for(std::chrono::seconds(5));
  ASSERT_EQ(waitpid(run.pid, nullptr, WNOHANG), 0) << "run gave up before the camera came: " << slurp(run.err);
  FakeCamera fake("127.0.0.1", "PPLATE");
  EXPECT_EQ(waitFor(run, std::chrono::seconds(60)), 0) << slurp(run.err);
  EXPECT_NE(slurp(run.err).find("no camera 'PPLATE'"), std::string::npos)
      << "it said what it waited for: " << slurp(run.err);
  EXPECT_NE(slurp(run.err).find("waiting for it"), std::string::npos) << slurp(run.err);
  EXPECT_EQ(
      std::distance(std::filesystem::directory_iterator(dir.path() / "frames"), std::filesystem::directory_iterator{}),
      10);

  // startup_wait_s: 0 fails at once.
  int status = 0;
  std::string text = runCli(
      "run " + config + " --set sources.cam.params.camera=PPNEVER --set sources.cam.params.startup_wait_s=0", status);
  EXPECT_EQ(WEXITSTATUS(status), 2) << text;
  EXPECT_NE(text.find("no camera 'PPNEVER'"), std::string::npos) << text;
}

// The shipped camera configs run against the fake camera (serving BayerRG8 frames).
TEST(Aravis, ShippedCameraConfigsRunWithTheFakeCamera) {
  FakeCamera fake("127.0.0.1", "PPCONF");
  test::TempDir dir;
  int status = 0;
  std::string text = runCli("run " + (test::sourceDir() / "config/camera.yaml").string() +
                                " --frames 20 --backend cpu --set sources.cam.params.camera=PPCONF --set "
                                "sources.cam.params.pixel_format=BayerRG8"
                                " --set sinks.preview.params.rtsp_port=0 --set sinks.raw.params.path=" +
                                dir / "camera.mkv" + " --set sinks.boxes.params.path=" + dir / "faces.jsonl",
                            status);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("frames 20 in"), std::string::npos) << text;
  EXPECT_NE(text.find("(20 raw frames)"), std::string::npos) << text;
  EXPECT_NE(text.find("camera_frames"), std::string::npos) << "the camera's counters are in the metrics: " << text;
}

// The stereo rig's config on two fake cameras (512x480 mono, so S0 is 256x240: a calibration
// without a recorded size stands in for the rig's).
TEST(Aravis, TheStereoCamerasConfigRunsTheWholeGraph) {
  FakeCamera left("127.0.0.1", "PPSTEREO");
  arv_enable_interface("Fake");
  test::TempDir dir;
  std::ofstream(dir / "calib.yaml")
      << "M1: [1000, 0, 128, 0, 1000, 120, 0, 0, 1]\nD1: [0, 0, 0, 0, 0]\nM2: [1000, 0, 128, 0, 1000, 120, 0, 0, 1]\n"
         "D2: [0, 0, 0, 0, 0]\nR: [1, 0, 0, 0, 1, 0, 0, 0, 1]\nT: [-0.1, 0, 0]\nR1: [1, 0, 0, 0, 1, 0, 0, 0, 1]\n"
         "R2: [1, 0, 0, 0, 1, 0, 0, 0, 1]\nP1: [1000, 0, 128, 0, 0, 1000, 120, 0, 0, 0, 1, 0]\n"
         "P2: [1000, 0, 128, -100, 0, 1000, 120, 0, 0, 0, 1, 0]\nQ: [1, 0, 0, -128, 0, 1, 0, -120, 0, 0, 0, 1000, 0, "
         "0, 10, 0]\n";
  std::string calib = dir / "calib.yaml";
  // In process: the second camera is Aravis' in-process "Fake" interface.
  Diagnostics d("stereo-cameras.yaml");
  PipelineSpec spec =
      loadPipeline((test::sourceDir() / "config/stereo-cameras.yaml").string(),
                   {"sources.left.params.camera=PPSTEREO", "sources.right.params.camera=Fake_1",
                    "sources.left.params.pixel_format=Mono8", "sources.right.params.pixel_format=Mono8",
                    "stages.rectified.params.calibration=" + calib, "stages.sgm.params.calibration=" + calib,
                    "sinks.preview.params.rtsp_port=0", "sinks.raw.params.path=" + dir / "stereo.mkv",
                    "sinks.boxes.params.path=" + dir / "faces.jsonl"},
                   d);
  auto graph = d.empty() ? Graph::build(spec, registry(), d, {"cpu", 4, false}) : nullptr;
  ASSERT_TRUE(graph) << d.text();
  graph->run();
  graph.reset();
  arv_disable_interface("Fake");
  std::ifstream faces(dir / "faces.jsonl");
  int lines = 0;
  for (std::string line; std::getline(faces, line);) ++lines;
  EXPECT_EQ(lines, 4) << "a detections line per frame";
  EXPECT_TRUE(std::filesystem::exists(dir / "stereo.mkv"));
}

TEST(Aravis, TheCamerasCommandListsTheFakeCamera) {
  FakeCamera fake("127.0.0.1", "PPLIST");
  FILE* out = popen((binary() + " cameras").c_str(), "r");
  ASSERT_TRUE(out);
  std::string text;
  char line[512];
  while (fgets(line, sizeof line, out)) text += line;
  EXPECT_EQ(pclose(out), 0);
  EXPECT_NE(text.find("Aravis-Fake-PPLIST"), std::string::npos) << text;
  EXPECT_NE(text.find("pixel formats"), std::string::npos) << text;
  EXPECT_NE(text.find("Mono8"), std::string::npos) << text;
}

}  // namespace
}  // namespace pp
