#include "profile/region_naming.h"

namespace weft {
namespace {

constexpr std::string_view kGccOutlined = "._omp_fn.";
constexpr std::string_view kClangOutlined = "omp_outlined";

// Removes demangler suffixes for compiler-made clones: " (._omp_fn.0)",
// " (.constprop.0)", " [clone .isra.0]".
std::string_view strip_clone_suffixes(std::string_view name) {
  while (true) {
    if (name.ends_with(")")) {
      size_t open = name.rfind(" (.");
      if (open != std::string_view::npos && name.find(')', open) == name.size() - 1) {
        name = name.substr(0, open);
        continue;
      }
    }
    if (name.ends_with("]")) {
      size_t open = name.rfind(" [clone ");
      if (open != std::string_view::npos) {
        name = name.substr(0, open);
        continue;
      }
    }
    return name;
  }
}

std::string_view strip_trailing_qualifiers(std::string_view name) {
  static constexpr std::string_view kQualifiers[] = {" const", " volatile", " &&", " &",
                                                     " noexcept"};
  bool stripped = true;
  while (stripped) {
    stripped = false;
    for (std::string_view qualifier : kQualifiers) {
      if (name.ends_with(qualifier)) {
        name.remove_suffix(qualifier.size());
        stripped = true;
      }
    }
  }
  return name;
}

}  // namespace

bool is_omp_outlined(std::string_view function) {
  return function.find(kGccOutlined) != std::string_view::npos ||
         function.find(kClangOutlined) != std::string_view::npos;
}

bool is_anonymous_omp_outlined(std::string_view function) {
  return function.starts_with(".omp_outlined") || function.starts_with("__omp_outlined");
}

std::string omp_parent_function(std::string_view function) {
  if (is_anonymous_omp_outlined(function)) return {};
  // Demangled C++: "foo(int) (._omp_fn.0)" or "foo(int) (.omp_outlined)".
  size_t clone = function.find(" (.");
  if (clone != std::string_view::npos && is_omp_outlined(function.substr(clone))) {
    return std::string(function.substr(0, clone));
  }
  // C and unmangled: "foo._omp_fn.0", "foo.omp_outlined".
  size_t suffix = function.find(kGccOutlined);
  if (suffix == std::string_view::npos) suffix = function.find(".omp_outlined");
  if (suffix != std::string_view::npos && suffix > 0) {
    return std::string(function.substr(0, suffix));
  }
  return {};
}

std::string without_clone_suffix(std::string_view function) {
  std::string name(function);
  for (bool changed = true; changed;) {
    changed = false;
    // " [clone .constprop.0]" (demangled C++)
    if (name.size() > 9 && name.back() == ']') {
      const size_t open = name.rfind(" [clone .");
      if (open != std::string::npos) {
        name.erase(open);
        changed = true;
        continue;
      }
    }
    // ".constprop.0", ".isra.0", ".part.0", ".lto_priv.0", ".cold" (C and mangled)
    size_t end = name.size();
    while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
    for (std::string_view suffix : {".constprop.", ".isra.", ".part.", ".lto_priv.", ".cold"}) {
      const bool numbered = suffix.back() == '.';
      const size_t stop = numbered ? end : name.size();
      if (numbered && end == name.size()) continue;  // needs its number
      if (stop >= suffix.size() && name.compare(stop - suffix.size(), suffix.size(), suffix) == 0 &&
          stop - suffix.size() > 0) {
        name.erase(stop - suffix.size());
        changed = true;
        break;
      }
    }
  }
  return name;
}

std::string function_base_name(std::string_view function) {
  std::string_view name = strip_trailing_qualifiers(strip_clone_suffixes(function));
  if (!name.ends_with(")")) return std::string(function);

  // Find the '(' opening the parameter list.
  int depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos || open == 0) return std::string(function);
  name = name.substr(0, open);

  // Drop a return type ("void ns::f<int>"): the last space outside <> and ().
  depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    char c = name[i];
    if (c == '>' || c == ')') ++depth;
    if (c == '<' || c == '(') --depth;
    if (c == ' ' && depth == 0) {
      std::string_view rest = name.substr(i + 1);
      if (!rest.starts_with("operator") && name.substr(0, i).find("operator") == name.npos) {
        name = rest;
      }
      break;
    }
  }
  return std::string(name);
}

std::string_view path_basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace weft
