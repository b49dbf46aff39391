// cltrace: the command-line tool. Everything lives in the verbs (cli/verb.h).
#include <iostream>
#include <string>
#include <vector>

#include "cli/verb.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv, argv + argc);
  int code = cltrace::cli::RunCli(args, std::cout, std::cerr);
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "cltrace: error writing to standard output\n";
    return cltrace::cli::kExitBadInput;
  }
  return code;
}
