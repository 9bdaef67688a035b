#include "mfu/trace.h"

namespace mfu {

uint32_t StringTable::Intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end())
    return it->second;
  auto id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  index_.emplace(strings_.back(), id);
  return id;
}

void StringTable::Reindex() {
  index_.clear();
  for (uint32_t i = 0; i < strings_.size(); ++i)
    index_.emplace(strings_[i], i);
}

}  // namespace mfu
