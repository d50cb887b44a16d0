// Running the polarpipe binary from a test: spawn with stdout and stderr to files, wait with a
// timeout.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support.hpp"

namespace pp {

// A file's whole text ("" when it cannot be read): a child's output.
inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The polarpipe command built beside the tests.
inline std::string binary() { return (test::binaryDir() / "bin/polarpipe").string(); }

struct Child {
  pid_t pid = -1;
  std::string out, err;  // files holding stdout and stderr
};

// addressSpaceBytes > 0 caps the child's virtual memory (RLIMIT_AS); sanitizer builds, which
// reserve terabytes of shadow memory, run without the cap.
inline Child spawn(const std::vector<std::string>& args, const test::TempDir& dir, rlim_t addressSpaceBytes = 0) {
  Child c{-1, dir / "stdout.txt", dir / "stderr.txt"};
  c.pid = fork();
  if (c.pid == 0) {
#if !defined(__SANITIZE_ADDRESS__)
    if (addressSpaceBytes > 0) {
      rlimit limit{addressSpaceBytes, addressSpaceBytes};
      setrlimit(RLIMIT_AS, &limit);
    }
#endif
    int o = open(c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644),
        e = open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return c;
}

// The exit code, or -1 if it did not exit within the timeout (then it is killed).
inline int waitFor(const Child& c, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(c.pid, &status, WNOHANG) == c.pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(c.pid, SIGKILL);
  waitpid(c.pid, &status, 0);
  return -1;
}

}  // namespace pp
