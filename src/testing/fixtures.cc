#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
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

std::string GzipText(const std::string& text, int level) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string TestTracePath(std::string_view name) {
  return std::string(MFU_SOURCE_DIR) + "/tests/data/traces/" + std::string(name);
}

}  // namespace mfu::testing
