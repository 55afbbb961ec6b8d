// Support code for Boost.Context's ucontext backend, used under
// --config=asan (BOOST_USE_UCONTEXT + BOOST_USE_ASAN, see .bazelrc) because
// that backend tells AddressSanitizer about every stack switch.
//
// Debian's libboost_context is built for the default fcontext backend, so the
// one out-of-line function the ucontext header declares is missing from it:
// fiber_activation_record::current(), the calling thread's running context.
// It is defined here. Each thread starts in its own "main" activation record,
// created on first use and freed when the thread exits.
//
// In every other config this file compiles to nothing.

#if defined(BOOST_USE_UCONTEXT)

#include <memory>

#include "boost/context/fiber.hpp"

namespace boost {
namespace context {
namespace detail {

fiber_activation_record*& fiber_activation_record::current() noexcept {
  // Owns the thread's main-context record for the thread's lifetime.
  thread_local std::unique_ptr<fiber_activation_record> main_record;
  thread_local fiber_activation_record* running = nullptr;
  if (running == nullptr) {
    main_record = std::make_unique<fiber_activation_record>();
    running = main_record.get();
  }
  return running;
}

}  // namespace detail
}  // namespace context
}  // namespace boost

#endif  // BOOST_USE_UCONTEXT
