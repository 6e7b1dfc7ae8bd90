// A std::thread program, built with $(CXX) in one command.
#include <cstdio>
#include <thread>

int main() {
  long sum = 0;
  std::thread t([&sum] {
    for (long i = 0; i < 100; i++) sum += i;
  });
  t.join();
  std::printf("hello_cxx %ld\n", sum);
  return 0;
}
