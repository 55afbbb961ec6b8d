// ThreadSanitizer suppressions built into the scheduler, for false positives
// that come from uninstrumented system libraries (Debian's libstdc++ is not
// built with -fsanitize=thread, so TSan cannot see its internal atomic
// reference counts). Only compiled into TSan builds; never suppresses project
// code. TSan asks the executable for this function at start-up, so this
// file is linked statically (see BUILD).

#if defined(__SANITIZE_THREAD__)
#define CYBER_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CYBER_TSAN_BUILD 1
#endif
#endif

#if defined(CYBER_TSAN_BUILD)
extern "C" const char* __tsan_default_suppressions() {
  // An Async future whose shared state holds an exception: the exception
  // object and its copy-on-write message are reference-counted inside
  // libstdc++/libsupc++ with atomics TSan does not see, so the last release
  // (on whichever thread) is reported as racing with an earlier read of the
  // message on the other.
  return "race:std::__future_base::_Result*::_M_destroy\n";
}
#endif
