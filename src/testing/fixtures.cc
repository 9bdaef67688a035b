#include <gtest/gtest.h>

#include <utility>

#include "testing/trace_builder.h"

namespace mfu::testing {
namespace {

// The value of `loaded`, reported as a test failure when it is an error.
template <typename T>
T ValueOf(StatusOr<T> loaded) {
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return loaded.ok() ? std::move(loaded).value() : T();
}

// ValueOf, kept alive for the whole run (held by a function-local static).
template <typename T>
const T& Keep(StatusOr<T> loaded) {
  return *new T(ValueOf(std::move(loaded)));
}

}  // namespace

const KernelClassifier& BuiltinClassifier() {
  static const KernelClassifier& classifier = Keep(KernelClassifier::LoadBuiltin());
  return classifier;
}

ModelSpec TinyModel() {
  GenericModelOptions o;
  o.layers = 2;
  o.hidden = 256;
  o.heads = 4;
  o.ffn = 1024;
  o.vocab = 1000;
  return ValueOf(BuildGenericModel(o));
}

const HardwareDb& BuiltinHardware() {
  static const HardwareDb& db = Keep(HardwareDb::LoadBuiltin());
  return db;
}

}  // namespace mfu::testing
