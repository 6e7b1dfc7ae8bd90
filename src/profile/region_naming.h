// How function names become region names and kinds. Shared by the profile
// writer (which names regions) and the reader (which matches --region).
#pragma once

#include <string>
#include <string_view>

namespace weft {

// Region kinds as stored in regions.kind.
inline constexpr const char* kRegionFunction = "function";
inline constexpr const char* kRegionOmpParallel = "omp_parallel";
inline constexpr const char* kRegionLoop = "loop";
inline constexpr const char* kRegionSection = "section";

// True for the bodies compilers outline from `#pragma omp parallel`:
// GCC "foo._omp_fn.0" / "foo(int) (._omp_fn.0)", clang ".omp_outlined.",
// ".omp_outlined._debug__", "foo.omp_outlined", "__omp_outlined__".
bool is_omp_outlined(std::string_view function);

// True when an outlined body's name says nothing about where it came from
// (clang's ".omp_outlined."), so it needs a source position to be unique.
bool is_anonymous_omp_outlined(std::string_view function);

// The function an outlined body was outlined from, when its name tells:
// "foo._omp_fn.0" -> "foo", "foo(int) (._omp_fn.0)" -> "foo(int)",
// "foo(int) (.omp_outlined)" -> "foo(int)". Empty otherwise.
std::string omp_parent_function(std::string_view function);

// The source function a compiler clone was made from: gcc's `.constprop.N`,
// `.isra.N`, `.part.N`, `.cold`, `.lto_priv.N` suffixes and the demangled
// ` [clone .constprop.0]` forms are removed ("moments.constprop.0" ->
// "moments"), so a function keeps one region however it was optimized.
std::string without_clone_suffix(std::string_view function);

// A demangled name without its parameter list and qualifiers:
// "ns::Grid<int>::step(int, double) const" -> "ns::Grid<int>::step". Names
// without a parameter list are returned unchanged.
std::string function_base_name(std::string_view function);

// The last path component: "/a/b/c.cpp" -> "c.cpp".
std::string_view path_basename(std::string_view path);

}  // namespace weft
