#pragma once

// MFU_CHECK: always-on assertion for programming errors (never for bad input,
// which is reported through Status). Prints file:line and aborts.
#include <cstdio>
#include <cstdlib>

#define MFU_CHECK(cond)                                                                 \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: MFU_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

#ifdef NDEBUG
#define MFU_DCHECK(cond) \
  do {                   \
  } while (0)
#else
#define MFU_DCHECK(cond) MFU_CHECK(cond)
#endif
