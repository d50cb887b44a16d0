// GObjects owned by a unique_ptr: g_object_unref when the owner lets go (Aravis' cameras, streams
// and chunk parsers; gst-rtsp-server's objects). GStreamer's own objects use gst::Owned.
#pragma once
#include <memory>

#include <glib-object.h>

namespace pp::glib {

struct ObjectUnref {
  void operator()(gpointer object) const { g_object_unref(object); }
};
template <class T> using Owned = std::unique_ptr<T, ObjectUnref>;

}  // namespace pp::glib
