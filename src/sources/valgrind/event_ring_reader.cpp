#include "sources/valgrind/event_ring_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace weft {

namespace {

std::string ring_directory() {
  if (access("/dev/shm", W_OK) == 0) return "/dev/shm";
  const char* tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

// Text carried in the `n` bytes of the slots after a header slot.
std::string slot_text(const WeftRingSlot* slots, uint64_t available, uint64_t n) {
  const uint64_t bytes = std::min<uint64_t>(n, available * sizeof(WeftRingSlot));
  return std::string(reinterpret_cast<const char*>(slots), bytes);
}

uint64_t text_slots(uint64_t n) { return (n + sizeof(WeftRingSlot) - 1) / sizeof(WeftRingSlot); }

}  // namespace

EventRing::EventRing(uint64_t block_bytes, uint64_t block_count) {
  std::string tmpl = ring_directory() + "/weft-ring.XXXXXX";
  const int fd = mkstemp(tmpl.data());
  if (fd < 0)
    throw std::runtime_error(fmt::format("cannot create the event ring: {}", strerror(errno)));
  path_ = tmpl;
  linked_ = true;
  size_ = WEFT_RING_HEADER_BYTES + block_bytes * block_count;
  if (ftruncate(fd, static_cast<off_t>(size_)) != 0) {
    close(fd);
    unlink_file();
    throw std::runtime_error(fmt::format("cannot size the event ring: {}", strerror(errno)));
  }
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    unlink_file();
    throw std::runtime_error(fmt::format("cannot map the event ring: {}", strerror(errno)));
  }
  base_ = static_cast<char*>(p);
  header_ = reinterpret_cast<WeftRingHeader*>(base_);
  header_->block_bytes = block_bytes;
  header_->block_count = block_count;
  __atomic_store_n(&header_->magic, WEFT_RING_MAGIC, __ATOMIC_RELEASE);
}

EventRing::~EventRing() {
  if (base_) munmap(base_, size_);
  unlink_file();
}

void EventRing::unlink_file() {
  if (linked_) unlink(path_.c_str());
  linked_ = false;
}

bool EventRing::tool_attached() const {
  return __atomic_load_n(&header_->tool_attached, __ATOMIC_ACQUIRE) != 0;
}

bool EventRing::peek(const WeftRingSlot*& slots, uint64_t& count) const {
  if (__atomic_load_n(&header_->produced, __ATOMIC_ACQUIRE) <= consumed_) return false;
  peek_unpublished(slots, count);
  return true;  // even when empty: it must be released
}

bool EventRing::peek_unpublished(const WeftRingSlot*& slots, uint64_t& count) const {
  const char* block =
      base_ + WEFT_RING_HEADER_BYTES + (consumed_ % header_->block_count) * header_->block_bytes;
  const uint64_t capacity = (header_->block_bytes - sizeof(uint64_t)) / sizeof(WeftRingSlot);
  count = std::min(*reinterpret_cast<const uint64_t*>(block), capacity);
  slots = reinterpret_cast<const WeftRingSlot*>(block + sizeof(uint64_t));
  return count > 0;
}

void EventRing::release() { __atomic_store_n(&header_->consumed, ++consumed_, __ATOMIC_RELEASE); }

ThreadContext* RingEventDecoder::thread(uint64_t tid) {
  return tid < threads_.size() ? threads_[tid] : nullptr;
}

void RingEventDecoder::bind(ThreadContext* c) {
  current_ = c;
  current_state_ = c ? c->comm.load(std::memory_order_relaxed) : nullptr;
  current_imbalance_ = c ? c->imbalance.load(std::memory_order_relaxed) : nullptr;
}

void RingEventDecoder::consume(const WeftRingSlot* slots, uint64_t count) {
  CommunicationAnalyzer& comm = session_.communication();
  for (uint64_t i = 0; i < count && !ended_; ++i) {
    const WeftRingSlot& s = slots[i];
    const uint64_t type = s.b & 0xff;
    const uint64_t rest = count - i - 1;  // slots after this one in the block
    switch (type) {
      case WEFT_REC_READ:
      case WEFT_REC_WRITE:
      case WEFT_REC_ATOMIC_WRITE: {
        if (!current_state_) break;
        const uint64_t pc = s.b >> WEFT_REC_PC_SHIFT;
        const size_t size = (s.b >> 8) & WEFT_REC_SIZE_MAX;
        const bool is_write = type != WEFT_REC_READ;
        if (current_) session_.watch_access(*current_, pc, s.a, is_write);
        if (is_write)
          comm.write(*current_state_, pc, s.a, size);
        else
          comm.read(*current_state_, pc, s.a, size);
        if (current_)
          CaptureSession::feed_access(*current_, session_.analyzers(), pc, s.a,
                                      static_cast<uint32_t>(size), is_write,
                                      type == WEFT_REC_ATOMIC_WRITE);
        break;
      }
      case WEFT_REC_BLOCK:
        if (current_imbalance_)
          session_.imbalance()->block(*current_imbalance_, s.b >> WEFT_REC_PC_SHIFT, s.a);
        break;
      case WEFT_REC_SWITCH:
        bind(thread(s.a));
        break;
      // A multi-slot record cut by the end of its block (the producer died
      // while writing it) ends the consumption.
      case WEFT_REC_THREAD_START:
        if (rest < 2) return;
        i += decode_thread_start(slots + i);
        break;
      case WEFT_REC_THREAD_EXIT:
        if (rest < 1) return;
        i += decode_thread_exit(slots + i);
        break;
      case WEFT_REC_SYNC:
        if (rest < 2) return;
        i += decode_sync(slots + i);
        break;
      case WEFT_REC_ALLOCATION:
        if (rest < 1) return;
        i += decode_allocation(slots + i);
        break;
      case WEFT_REC_DISTRIBUTION:
        if (rest < 2) return;
        i += decode_distribution(slots + i);
        break;
      case WEFT_REC_RELEASE:
        if (current_) session_.release_memory(*current_, s.a, s.b >> 8);
        break;
      case WEFT_REC_BLOCK_COUNT:
        if (rest < 1) return;
        i += decode_block_count(slots + i);
        break;
      case WEFT_REC_MAPS:
        i += decode_maps(slots + i, rest);
        break;
      case WEFT_REC_END:
        decode_end(slots + i, rest);
        break;
      default:
        throw std::runtime_error(
            fmt::format("corrupt event ring: record type {} from weft's Valgrind tool", type));
    }
  }
}

uint64_t RingEventDecoder::decode_thread_start(const WeftRingSlot* record) {
  const WeftRingSlot& s = record[0];
  const int32_t parent = static_cast<int32_t>(((s.b >> 8) & 0xffffffffu)) - 1;
  ThreadContext* c = session_.start_thread(static_cast<uint32_t>(s.a), parent, record[1].a,
                                           static_cast<int32_t>(record[1].b), record[2].a);
  if (s.a < (uint64_t{1} << 20)) {
    if (threads_.size() <= s.a) threads_.resize(s.a + 1, nullptr);
    threads_[s.a] = c;
  }
  bind(c);
  return 2;
}

uint64_t RingEventDecoder::decode_thread_exit(const WeftRingSlot* record) {
  if (ThreadContext* c = thread(record[0].a)) {
    c->basic_blocks = record[1].b;
    session_.finish_thread(*c, record[1].a);
  }
  return 1;
}

uint64_t RingEventDecoder::decode_sync(const WeftRingSlot* record) {
  const WeftRingSlot& s = record[0];
  if (current_)
    session_.record_sync(*current_, static_cast<SyncKind>((s.b >> 8) & 0xffff), s.a,
                         s.b >> WEFT_REC_PC_SHIFT, record[1].a, static_cast<int64_t>(record[1].b),
                         static_cast<int64_t>(record[2].a));
  bind(current_);  // a section boundary may pause or resume the thread's counting
  return 2;
}

uint64_t RingEventDecoder::decode_allocation(const WeftRingSlot* record) {
  if (current_)
    session_.record_allocation(*current_, record[0].b >> WEFT_REC_PC_SHIFT, record[0].a,
                               record[1].a);
  return 1;
}

uint64_t RingEventDecoder::decode_distribution(const WeftRingSlot* record) {
  DistributionDeclaration d;
  d.base = record[0].a;
  d.element_size = record[1].a;
  d.count = record[1].b;
  d.block = record[2].a;
  d.kind = static_cast<uint32_t>(record[2].b >> 32);
  d.threads = static_cast<uint32_t>(record[2].b);
  if (d.valid()) session_.declare_distribution(d);
  return 2;
}

uint64_t RingEventDecoder::decode_block_count(const WeftRingSlot* record) {
  if (ThreadContext* c = thread(record[0].a)) c->basic_blocks = record[1].a;
  return 1;
}

uint64_t RingEventDecoder::decode_maps(const WeftRingSlot* record, uint64_t rest) {
  maps_ = slot_text(record + 1, rest, record[0].a);
  return text_slots(record[0].a);
}

void RingEventDecoder::decode_end(const WeftRingSlot* record, uint64_t rest) {
  complete_ = ((record[0].b >> 8) & 1) != 0;
  reason_ = slot_text(record + 1, rest, record[0].a);
  ended_ = true;
}

}  // namespace weft
