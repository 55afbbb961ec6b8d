#include "cyber/graph/descriptors.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cyber {
namespace graph {
namespace {

namespace pb = google::protobuf;

void AddFile(const pb::FileDescriptor* file, std::set<std::string>* seen,
             pb::FileDescriptorSet* set) {
  if (!seen->insert(file->name()).second) return;
  for (int i = 0; i < file->dependency_count(); ++i) AddFile(file->dependency(i), seen, set);
  file->CopyTo(set->add_file());
}

std::string FieldText(const pb::FieldDescriptor* f) {
  std::string type = f->message_type() != nullptr ? f->message_type()->full_name()
                     : f->enum_type() != nullptr  ? f->enum_type()->full_name()
                                                  : f->type_name();
  const char* label = f->is_repeated() ? "repeated " : "";
  return absl::StrCat(f->name(), " (", label, type, ")");
}

// Whether two fields' wire meaning is the same, apart from nested types
// (compared separately).
bool SameField(const pb::FieldDescriptor* a, const pb::FieldDescriptor* b) {
  if (a->name() != b->name() || a->type() != b->type() ||
      a->is_repeated() != b->is_repeated()) {
    return false;
  }
  if (a->message_type() != nullptr &&
      a->message_type()->full_name() != b->message_type()->full_name()) {
    return false;
  }
  if (a->enum_type() != nullptr && a->enum_type()->full_name() != b->enum_type()->full_name()) {
    return false;
  }
  return true;
}

void Compare(const pb::Descriptor* a, const std::string& a_name, const pb::Descriptor* b,
             const std::string& b_name, std::set<std::string>* visited,
             std::vector<std::string>* out) {
  if (!visited->insert(a->full_name()).second) return;
  const std::string where = a->full_name() == b->full_name()
                                ? a->full_name()
                                : absl::StrCat(a->full_name(), "/", b->full_name());
  for (int i = 0; i < a->field_count(); ++i) {
    const pb::FieldDescriptor* fa = a->field(i);
    const pb::FieldDescriptor* fb = b->FindFieldByNumber(fa->number());
    if (fb == nullptr) {
      out->push_back(absl::StrCat("field ", fa->number(), " of ", where, ": only in ", a_name,
                                  "'s: ", FieldText(fa)));
      continue;
    }
    if (!SameField(fa, fb)) {
      out->push_back(absl::StrCat("field ", fa->number(), " of ", where, ": ", FieldText(fa),
                                  " in ", a_name, "'s, ", FieldText(fb), " in ", b_name,
                                  "'s"));
      continue;
    }
    if (fa->message_type() != nullptr) {
      Compare(fa->message_type(), a_name, fb->message_type(), b_name, visited, out);
    }
  }
  for (int i = 0; i < b->field_count(); ++i) {
    const pb::FieldDescriptor* fb = b->field(i);
    if (a->FindFieldByNumber(fb->number()) == nullptr) {
      out->push_back(absl::StrCat("field ", fb->number(), " of ", where, ": only in ", b_name,
                                  "'s: ", FieldText(fb)));
    }
  }
}

}  // namespace

pb::FileDescriptorSet DescriptorSetOf(const pb::Descriptor* type) {
  pb::FileDescriptorSet set;
  std::set<std::string> seen;
  if (type != nullptr) AddFile(type->file(), &seen, &set);
  return set;
}

std::vector<std::string> TypeDifferences(const pb::Descriptor* a, const std::string& a_name,
                                         const pb::Descriptor* b, const std::string& b_name) {
  std::vector<std::string> out;
  if (a == nullptr || b == nullptr) return out;
  if (a->full_name() != b->full_name()) {
    out.push_back(absl::StrCat("type ", a->full_name(), " in ", a_name, "'s, ", b->full_name(),
                               " in ", b_name, "'s"));
  }
  std::set<std::string> visited;
  Compare(a, a_name, b, b_name, &visited, &out);
  return out;
}

absl::StatusOr<const pb::Descriptor*> DescriptorLibrary::Load(const pb::FileDescriptorSet& set,
                                                              const std::string& type_name) {
  std::string key;
  set.SerializeToString(&key);
  MutexLock lock(&mu_);
  auto it = pools_.find(key);
  if (it == pools_.end()) {
    auto pool = std::make_unique<Pool>();
    for (const pb::FileDescriptorProto& file : set.file()) {
      if (pool->pool.BuildFile(file) == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("descriptor of ", type_name, ": file \"", file.name(),
                         "\" does not build (a dependency missing from the set, or invalid)"));
      }
    }
    pool->factory = std::make_unique<pb::DynamicMessageFactory>(&pool->pool);
    it = pools_.emplace(std::move(key), std::move(pool)).first;
  }
  const pb::Descriptor* type = it->second->pool.FindMessageTypeByName(type_name);
  if (type == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "descriptor set announced for ", type_name, " does not define that message type"));
  }
  owner_[type] = it->second.get();
  return type;
}

const pb::Message* DescriptorLibrary::Prototype(const pb::Descriptor* type) {
  MutexLock lock(&mu_);
  auto it = owner_.find(type);
  if (it == owner_.end()) return nullptr;
  return it->second->factory->GetPrototype(type);
}

}  // namespace graph
}  // namespace cyber
