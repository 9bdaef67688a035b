#include <gtest/gtest.h>

#include <utility>

#include "testing/trace_builder.h"

namespace mfu::testing {
namespace {

// The value of `loaded`, reported as a test failure when it is an error.
template <typename T>
const T& Keep(StatusOr<T> loaded) {
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return *new T(loaded.ok() ? std::move(loaded).value() : T());
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
  return Keep(BuildGenericModel(o));
}

const HardwareDb& BuiltinHardware() {
  static const HardwareDb& db = Keep(HardwareDb::LoadBuiltin());
  return db;
}

}  // namespace mfu::testing
