// count_events FILE: opens a .cltrace trace with the installed format reader and prints
// "<calls> calls, <rules> rules (cltrace <version>)" (the rule count comes from the installed
// checker, so both libraries link). Exit 2 if the trace cannot be read.
#include <cstdint>
#include <iostream>

#include "check/rules.h"
#include "cltrace_version.h"
#include "format/event.h"
#include "format/trace_reader.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: count_events FILE\n";
    return 2;
  }
  auto reader = cltrace::format::TraceReader::Open(argv[1]);
  if (!reader.ok()) {
    std::cerr << "count_events: " << reader.status() << "\n";
    return 2;
  }
  uint64_t calls = 0;
  cltrace::format::Event event;
  while ((*reader)->Next(&event)) ++calls;
  if (!(*reader)->status().ok()) {
    std::cerr << "count_events: " << (*reader)->status() << "\n";
    return 2;
  }
  std::cout << calls << " calls, " << cltrace::check::Rules().size() << " rules (cltrace "
            << CLTRACE_VERSION << ")\n";
  return 0;
}
