#include "pipeline/aravis/cameras.hpp"

#include <arpa/inet.h>
#include <arv.h>

#include <mutex>
#include <stdexcept>

#include "pipeline/glib_owned.hpp"

namespace pp::aravis {

namespace {

std::string text(const char* s) { return s ? s : ""; }

bool isIpAddress(const std::string& s) {
  in_addr address{};
  return inet_pton(AF_INET, s.c_str(), &address) == 1;
}

}  // namespace

std::vector<CameraInfo> listCameras(bool details) {
  static std::mutex listMutex;  // the device list is global to Aravis
  std::lock_guard lock(listMutex);
  arv_update_device_list();
  std::vector<CameraInfo> cameras;
  for (unsigned i = 0; i < arv_get_n_devices(); ++i) {
    CameraInfo c;
    c.id = text(arv_get_device_id(i));
    c.vendor = text(arv_get_device_vendor(i));
    c.model = text(arv_get_device_model(i));
    c.serial = text(arv_get_device_serial_nbr(i));
    c.address = text(arv_get_device_address(i));
    c.physicalId = text(arv_get_device_physical_id(i));
    c.protocol = text(arv_get_device_protocol(i));
    cameras.push_back(c);
  }
  if (!details) return cameras;
  for (CameraInfo& c : cameras) {
    GError* error = nullptr;
    glib::Owned<ArvCamera> camera(arv_camera_new(c.id.c_str(), &error));
    if (camera) {
      guint n = 0;
      const char** formats = arv_camera_dup_available_pixel_formats_as_strings(camera.get(), &n, &error);
      for (guint k = 0; formats && k < n; ++k) c.pixelFormats.push_back(formats[k]);
      g_free(formats);
      g_clear_error(&error);
      arv_camera_get_sensor_size(camera.get(), &c.sensorWidth, &c.sensorHeight, &error);
    }
    if (error) c.openError = error->message;
    g_clear_error(&error);
  }
  return cameras;
}

std::string resolveCamera(const std::string& wanted) {
  auto cameras = listCameras(false);
  for (const CameraInfo& c : cameras)
    if (wanted.empty() || wanted == c.id || wanted == c.serial || wanted == c.address || wanted == c.physicalId)
      return c.id;
  if (isIpAddress(wanted)) return wanted;
  std::string found;
  for (const CameraInfo& c : cameras) found += (found.empty() ? "" : ", ") + c.id + " (" + c.address + ")";
  throw CameraNotFound(
      wanted.empty()
          ? "no camera found (is it powered, on this subnet, and the network tuned? see deploy/README.md)"
          : "no camera '" + wanted + "' (by id, serial, IP or MAC); found: " + (found.empty() ? "none" : found));
}

}  // namespace pp::aravis
