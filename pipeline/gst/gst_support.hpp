// What every GStreamer node shares: one-time init, owning pointers, elements that say which
// package they come from, and bus errors as exceptions.
#pragma once
#include <gst/gst.h>
#include <gst/video/video.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "pipeline/image.hpp"

namespace pp::gst {

void ensureInit();

struct ObjectUnref {
  void operator()(gpointer object) const { gst_object_unref(object); }
};
template <class T> using Owned = std::unique_ptr<T, ObjectUnref>;

struct CapsUnref {
  void operator()(GstCaps* caps) const { gst_caps_unref(caps); }
};
using OwnedCaps = std::unique_ptr<GstCaps, CapsUnref>;

struct SampleUnref {
  void operator()(GstSample* sample) const { gst_sample_unref(sample); }
};
using OwnedSample = std::unique_ptr<GstSample, SampleUnref>;

// True when an element factory of this name is installed.
bool hasElement(const std::string& factory);

// Builds a pipeline from a gst-launch description; throws naming the element that is missing.
Owned<GstElement> parsePipeline(const std::string& description);

// The first error or warning-free EOS on the bus within `timeoutNs`: "" for EOS, else
// "ELEMENT: message (debug)". Throws when neither came in time.
std::string waitForEosOrError(GstElement* pipeline, GstClockTime timeoutNs);

// An error already on the bus, as "ELEMENT: message", or "" when there is none. Never blocks.
std::string pendingError(GstElement* pipeline);

// Drops every bus message but errors and EOS, which would otherwise pile up unread.
void keepOnlyErrorsOnBus(GstElement* pipeline);

// Copies a host image's rows into `buffer`, laid out as `info` says (its row stride).
void copyRows(const Image& image, GstBuffer* buffer, const GstVideoInfo& info);

// Stops a main loop that runs `context` on another thread and waits for that thread. The quit is
// queued into the loop: a g_main_loop_quit that lands before the thread reaches g_main_loop_run is
// lost, and the join would wait for ever.
void quitLoop(GMainLoop* loop, GMainContext* context, std::thread& thread);

// Sets the state; throws with the bus error when that fails at once (a file or port that cannot
// be opened). Does not wait for prerolling.
void setState(GstElement* pipeline, GstState state, const std::string& what);

}  // namespace pp::gst
