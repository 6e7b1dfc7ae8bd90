#include "common/loop_trace.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "common/loop_trace_format.h"

namespace weft {
namespace {

namespace format = loop_trace_format;

uint64_t saturating_add(uint64_t a, uint64_t b) { return a + b < a ? ~uint64_t{0} : a + b; }

uint64_t saturating_multiply(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? ~uint64_t{0} : product;
}

uint64_t node_length(const TraceNode& node) {
  if (node.kind == TraceNode::Kind::Value) return 1;
  uint64_t body = 0;
  for (const TraceNode& child : node.body) body = saturating_add(body, node_length(child));
  return saturating_multiply(node.count, body);
}

unsigned node_depth(const TraceNode& node) {
  if (node.kind == TraceNode::Kind::Value) return 0;
  unsigned deepest = 0;
  for (const TraceNode& child : node.body) deepest = std::max(deepest, node_depth(child));
  return deepest + 1;
}

// Walks the addresses of a trace; `index` holds the indices of the loops
// enclosing the current node within its top-level element, outermost first.
class Expander {
 public:
  Expander(const std::function<void(uint64_t)>& visit, uint64_t limit)
      : visit_(visit), remaining_(limit) {}

  // False once `limit` addresses were visited.
  bool node(const TraceNode& node) {
    if (remaining_ == 0) return false;
    if (node.kind == TraceNode::Kind::Value) {
      uint64_t address = node.base;
      const size_t n = std::min(node.coefficients.size(), index_.size());
      for (size_t k = 0; k < n; ++k)
        address += static_cast<uint64_t>(node.coefficients[k]) * index_[k];
      visit_(address);
      --remaining_;
      return true;
    }
    index_.push_back(0);
    for (uint64_t i = 0; i < node.count; ++i) {
      index_.back() = i;
      for (const TraceNode& child : node.body)
        if (!this->node(child)) return false;
    }
    index_.pop_back();
    return true;
  }

 private:
  const std::function<void(uint64_t)>& visit_;
  uint64_t remaining_;
  std::vector<uint64_t> index_;
};

// The address at position `position` (< node_length(node)) of a node whose
// enclosing loops have the indices `index`.
uint64_t address_at(const TraceNode& node, uint64_t position, std::vector<uint64_t>& index) {
  if (node.kind == TraceNode::Kind::Value) {
    uint64_t address = node.base;
    const size_t n = std::min(node.coefficients.size(), index.size());
    for (size_t k = 0; k < n; ++k)
      address += static_cast<uint64_t>(node.coefficients[k]) * index[k];
    return address;
  }
  uint64_t body = 0;
  for (const TraceNode& child : node.body) body = saturating_add(body, node_length(child));
  index.push_back(position / body);
  position %= body;
  for (const TraceNode& child : node.body) {
    const uint64_t length = node_length(child);
    if (position < length) {
      const uint64_t address = address_at(child, position, index);
      index.pop_back();
      return address;
    }
    position -= length;
  }
  index.pop_back();
  return 0;  // not reached: position < node_length(node)
}

// `count` addresses at positions floor(i * length / count) of the trace
// whose top-level elements `for_each_element(visit)` visits in order (it
// is called twice: the length, then the samples, each found in the one
// element that holds it).
template <class ForEachElement>
std::vector<uint64_t> sample_elements(ForEachElement&& for_each_element, size_t count) {
  uint64_t length = 0;
  for_each_element(
      [&](const TraceNode& element) { length = saturating_add(length, node_length(element)); });
  std::vector<uint64_t> samples;
  if (length == 0 || count == 0) return samples;
  const uint64_t taken = std::min<uint64_t>(length, count);
  samples.reserve(taken);
  std::vector<uint64_t> index;
  uint64_t start = 0;  // of the current element
  for_each_element([&](const TraceNode& element) {
    const uint64_t end = saturating_add(start, node_length(element));
    while (samples.size() < taken) {
      // floor(i * length / taken), without overflowing.
      const auto position =
          static_cast<uint64_t>(static_cast<unsigned __int128>(samples.size()) * length / taken);
      if (position >= end) break;
      samples.push_back(address_at(element, position - start, index));
    }
    start = end;
  });
  return samples;
}

class Formatter {
 public:
  explicit Formatter(size_t max_lines) : max_lines_(max_lines) {}

  // False when the line limit cut the node short.
  bool node(const TraceNode& node, unsigned level) {
    if (lines_ == max_lines_) return false;
    ++lines_;
    text_.append(2 * size_t{level}, ' ');
    if (node.kind == TraceNode::Kind::Value) {
      char hex[24];
      snprintf(hex, sizeof hex, "val 0x%llx", static_cast<unsigned long long>(node.base));
      text_ += hex;
      for (size_t k = 0; k < node.coefficients.size(); ++k) {
        const int64_t c = node.coefficients[k];
        if (c == 0) continue;
        // The magnitude as unsigned, so that INT64_MIN prints correctly.
        const uint64_t magnitude = c < 0 ? ~static_cast<uint64_t>(c) + 1 : static_cast<uint64_t>(c);
        text_ += c < 0 ? " - " : " + ";
        text_ += std::to_string(magnitude) + "*i" + std::to_string(k);
      }
      text_ += '\n';
      return true;
    }
    text_ += "for i" + std::to_string(level) + " = 0 to ";
    text_ += node.count == 0 ? std::string("-1") : std::to_string(node.count - 1);
    text_ += '\n';
    for (const TraceNode& child : node.body)
      if (!this->node(child, level + 1)) return false;
    return true;
  }

  std::string& text() { return text_; }

 private:
  size_t max_lines_;
  size_t lines_ = 0;
  std::string text_;
};

template <class Sink>
void encode_node(format::Writer<Sink>& writer, const TraceNode& node, unsigned depth) {
  if (node.kind == TraceNode::Kind::Value) {
    if (node.coefficients.size() != depth)
      throw std::invalid_argument("loop trace: a value inside " + std::to_string(depth) +
                                  " loops has " + std::to_string(node.coefficients.size()) +
                                  " coefficients");
    writer.value(node.base, node.coefficients.data(), depth);
    return;
  }
  if (node.kind != TraceNode::Kind::Loop)
    throw std::invalid_argument("loop trace: unknown node kind");
  if (depth >= format::kMaxDepth)
    throw std::invalid_argument("loop trace: loops nested deeper than " +
                                std::to_string(format::kMaxDepth));
  if (node.count == 0) throw std::invalid_argument("loop trace: loop count 0");
  if (node.body.empty()) throw std::invalid_argument("loop trace: empty loop body");
  writer.loop(node.count, node.body.size());
  for (const TraceNode& child : node.body) encode_node(writer, child, depth + 1);
}

class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size) : p_(data), end_(data + size), begin_(data) {}

  LoopTrace trace() {
    LoopTrace trace;
    for_each_element([&](TraceNode&& element) { trace.elements.push_back(std::move(element)); });
    return trace;
  }

  // Decodes the top-level elements one at a time: memory bounded by the
  // largest element, not by the trace (an irregular stream is millions of
  // top-level values).
  template <class Visit>
  void for_each_element(Visit&& visit) {
    const uint64_t elements = varint("element count");
    for (uint64_t e = 0; e < elements; ++e) visit(node(0));
    if (p_ != end_) fail(std::to_string(end_ - p_) + " trailing bytes after the last element");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("corrupt memory trace: " + what + " (offset " +
                             std::to_string(p_ - begin_) + ")");
  }

  uint64_t varint(const char* what) {
    uint64_t v;
    switch (format::get_varint(p_, end_, v)) {
      case format::VarintStatus::Ok:
        return v;
      case format::VarintStatus::Truncated:
        fail(std::string("truncated in a ") + what);
      case format::VarintStatus::TooLong:
        break;
    }
    fail(std::string("varint longer than 64 bits in a ") + what);
  }

  // `depth`: loops enclosing the node within its top-level element.
  TraceNode node(unsigned depth) {
    if (p_ == end_) fail("truncated before an element");
    const uint8_t tag = *p_++;
    TraceNode node;
    if (tag == format::kLoopTag) {
      if (depth >= format::kMaxDepth)
        fail("loops nested deeper than " + std::to_string(format::kMaxDepth));
      node.kind = TraceNode::Kind::Loop;
      node.count = varint("loop count");
      if (node.count == 0) fail("loop count 0");
      const uint64_t body = varint("loop body size");
      if (body == 0) fail("empty loop body");
      // No reserve(): `body` is not trusted, the input runs out first.
      for (uint64_t e = 0; e < body; ++e) node.body.push_back(this->node(depth + 1));
      return node;
    }
    if (!format::is_value_tag(tag)) {
      char hex[8];
      snprintf(hex, sizeof hex, "0x%02x", tag);
      --p_;
      fail(std::string("unknown tag ") + hex);
    }
    const unsigned n = format::value_tag_coefficients(tag);
    if (n != depth)
      fail("value with " + std::to_string(n) + " coefficients inside " + std::to_string(depth) +
           " loops");
    previous_ += static_cast<uint64_t>(format::zigzag_decode(varint("value base")));
    node.base = previous_;
    node.coefficients.reserve(n);
    for (unsigned k = 0; k < n; ++k)
      node.coefficients.push_back(format::zigzag_decode(varint("coefficient")));
    return node;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* begin_;
  uint64_t previous_ = 0;
};

}  // namespace

uint64_t trace_length(const LoopTrace& trace) {
  uint64_t n = 0;
  for (const TraceNode& element : trace.elements) n = saturating_add(n, node_length(element));
  return n;
}

void expand_loop_trace(const LoopTrace& trace, const std::function<void(uint64_t)>& visit,
                       uint64_t limit) {
  Expander expander(visit, limit);
  for (const TraceNode& element : trace.elements)
    if (!expander.node(element)) return;
}

std::vector<uint64_t> expand_loop_trace(const LoopTrace& trace, uint64_t limit) {
  std::vector<uint64_t> addresses;
  const uint64_t n = std::min(trace_length(trace), limit);
  if (n <= (uint64_t{1} << 26)) addresses.reserve(n);
  expand_loop_trace(
      trace, [&](uint64_t address) { addresses.push_back(address); }, limit);
  return addresses;
}

std::vector<uint64_t> sample_loop_trace(const LoopTrace& trace, size_t count) {
  return sample_elements(
      [&](auto&& visit) {
        for (const TraceNode& element : trace.elements) visit(element);
      },
      count);
}

unsigned trace_depth(const LoopTrace& trace) {
  unsigned deepest = 0;
  for (const TraceNode& element : trace.elements) deepest = std::max(deepest, node_depth(element));
  return deepest;
}

std::string format_loop_trace(const LoopTrace& trace, size_t max_lines) {
  Formatter formatter(max_lines);
  for (size_t e = 0; e < trace.elements.size(); ++e) {
    if (!formatter.node(trace.elements[e], 0)) {
      formatter.text() += "... (" + std::to_string(trace.elements.size() - e) + " more elements)\n";
      break;
    }
  }
  return std::move(formatter.text());
}

std::vector<uint8_t> encode_loop_trace(const LoopTrace& trace) {
  std::vector<uint8_t> bytes;
  auto sink = [&](const void* data, size_t n) {
    const auto* b = static_cast<const uint8_t*>(data);
    bytes.insert(bytes.end(), b, b + n);
  };
  format::Writer<decltype(sink)> writer(sink);
  writer.element_count(trace.elements.size());
  for (const TraceNode& element : trace.elements) encode_node(writer, element, 0);
  return bytes;
}

LoopTrace decode_loop_trace(const uint8_t* data, size_t size) {
  return Decoder(data, size).trace();
}

std::vector<uint64_t> sample_encoded_loop_trace(const uint8_t* data, size_t size, size_t count) {
  return sample_elements(
      [&](auto&& visit) {
        Decoder(data, size).for_each_element([&](TraceNode&& element) { visit(element); });
      },
      count);
}

TraceNode trace_value(uint64_t base, std::vector<int64_t> coefficients) {
  TraceNode node;
  node.kind = TraceNode::Kind::Value;
  node.base = base;
  node.coefficients = std::move(coefficients);
  return node;
}

TraceNode trace_loop(uint64_t count, std::vector<TraceNode> body) {
  TraceNode node;
  node.kind = TraceNode::Kind::Loop;
  node.count = count;
  node.body = std::move(body);
  return node;
}

}  // namespace weft
