// limited_child.h: runs a piece of a test in a forked child whose address space is limited to a
// margin above what it already has, so that an allocation the code under test asks for can fail
// the way it does in a WASM heap at its limit. Native only (WASM has no fork), and not under ASan
// (it reserves terabytes of shadow and aborts on a failed malloc): guard callers with
// ATTNVIZ_LIMITED_CHILD.
#pragma once

#if !defined(__EMSCRIPTEN__) && !defined(__SANITIZE_ADDRESS__) && \
    !(defined(__has_feature) && __has_feature(address_sanitizer))
#define ATTNVIZ_LIMITED_CHILD 1

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

// body() runs in the child once its address space is limited to margin_mib MiB above its size;
// the string it returns comes back. "crashed <what it wrote>" if the child did not exit normally.
template <class Body>
std::string InChildWithLittleMemory(long margin_mib, Body body) {
  int fds[2];
  if (pipe(fds) != 0) return "no pipe";
  const pid_t pid = fork();
  if (pid < 0) return "no fork";
  if (pid == 0) {
    long vm_kb = 0;
    if (FILE* f = std::fopen("/proc/self/status", "r")) {
      char line[256];
      while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmSize: %ld kB", &vm_kb) == 1) break;
      std::fclose(f);
    }
    const rlim_t limit = (rlim_t)(vm_kb + (margin_mib << 10)) << 10;
    const rlimit rl{limit, limit};
    setrlimit(RLIMIT_AS, &rl);
    const std::string out = body();
    if (write(fds[1], out.data(), out.size()) < 0) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, (size_t)n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? got : "crashed " + got;
}
#endif
