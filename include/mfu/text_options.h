#pragma once

// How a text renderer lays out its tables. The front end decides the width
// (the CLI: COLUMNS, else the terminal's size, else 100 when piped; --wide for
// no limit); renderers fit their tables into it by wrapping or abbreviating
// note columns, never by dropping figures.

namespace mfu {

struct TextOptions {
  static constexpr int kUnlimited = 0;
  int width = 100;  // columns; kUnlimited = no limit (--wide)
};

}  // namespace mfu
