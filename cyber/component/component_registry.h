// ComponentRegistry: component classes by name, for the launcher.
//
// Why a process-wide registry: a graph file names classes as strings, and
// classes register themselves at static-initialization time — linked into
// the launcher, or in a shared library the launcher dlopen()s (its static
// initializers run on load). This is the one global in the component layer,
// and it only maps names to factories.
//
//   CYBER_REGISTER_COMPONENT(ImuPoller)   // at namespace scope, in a .cc
//
// Threads: thread-safe.

#ifndef CYBER_COMPONENT_COMPONENT_REGISTRY_H_
#define CYBER_COMPONENT_COMPONENT_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"
#include "cyber/component/component_base.h"

namespace cyber {

class ComponentRegistry {
 public:
  using Factory = std::function<std::unique_ptr<ComponentBase>()>;

  static ComponentRegistry& Global();

  // Returns true (so it can initialize a static). A second registration of
  // a name is ignored with an error log (the first one stays).
  bool Register(const std::string& class_name, Factory factory);
  // Null if unknown.
  std::unique_ptr<ComponentBase> Create(const std::string& class_name) const;
  bool Contains(const std::string& class_name) const;
  std::vector<std::string> Names() const;

 private:
  mutable Mutex mu_;
  std::map<std::string, Factory> factories_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cyber

#define CYBER_COMPONENT_CONCAT_INNER(a, b) a##b
#define CYBER_COMPONENT_CONCAT(a, b) CYBER_COMPONENT_CONCAT_INNER(a, b)

// Registers `Class` (default-constructible, derived from TimerComponent or
// Component<M>) under its name as written.
#define CYBER_REGISTER_COMPONENT(Class)                                     \
  namespace {                                                               \
  [[maybe_unused]] const bool CYBER_COMPONENT_CONCAT(                       \
      cyber_component_registered_, __COUNTER__) =                           \
      ::cyber::ComponentRegistry::Global().Register(                        \
          #Class, []() -> std::unique_ptr<::cyber::ComponentBase> {         \
            return std::make_unique<Class>();                               \
          });                                                               \
  }

#endif  // CYBER_COMPONENT_COMPONENT_REGISTRY_H_
