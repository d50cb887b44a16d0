// Linked into every executable of the sanitizer build (the debug preset), so that the binaries run
// the same from ctest, a shell or a script: UBSan findings stop the program, and ASan keeps the full
// stack of each allocation (LeakSanitizer matches tools/sanitizers/lsan.supp's frames against it)
// and a small quarantine of freed memory (the soak test's flat-memory check measures the program,
// not the quarantine filling).
extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0:quarantine_size_mb=8"; }
extern "C" const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }
