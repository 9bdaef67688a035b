// mfu: thin entry point. The command line is parsed and run by RunCli
// (cli/app.cc), which maps its Status to an exit code: 0 ok, 1 data error or
// nothing fits, 2 usage error.
#include <iostream>

#include "cli/command.h"

int main(int argc, char** argv) {
  return mfu::cli::RunCli(argc, argv, std::cout, std::cerr);
}
