// The weft side of the event ring (event_ring.h): EventRing creates and maps
// the shared file and hands out published blocks; RingEventDecoder turns the
// records of those blocks into calls on a CaptureSession, exactly the calls
// the compile-time runtime makes from the program's threads, so both sources
// feed the same analyzers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sources/capture/capture_session.h"
#include "sources/valgrind/event_ring.h"

namespace weft {

class EventRing {
 public:
  // Creates the ring file (in /dev/shm, else $TMPDIR) and maps it; throws
  // std::runtime_error with a one-line cause.
  EventRing(uint64_t block_bytes, uint64_t block_count);
  ~EventRing();
  EventRing(const EventRing&) = delete;
  EventRing& operator=(const EventRing&) = delete;

  const std::string& path() const { return path_; }
  bool tool_attached() const;
  // Removes the file's name; the mapping stays (once the tool has mapped it).
  void unlink_file();

  // The oldest published block not yet consumed, or false.
  bool peek(const WeftRingSlot*& slots, uint64_t& count) const;
  // Gives the block peek() returned back to the producer.
  void release();
  // After the producer died: the block it was filling, up to the slot count
  // it last stored (the tool stores it at every synchronization event).
  bool peek_unpublished(const WeftRingSlot*& slots, uint64_t& count) const;

 private:
  std::string path_;
  bool linked_ = false;
  char* base_ = nullptr;
  size_t size_ = 0;
  WeftRingHeader* header_ = nullptr;
  uint64_t consumed_ = 0;
};

class RingEventDecoder {
 public:
  explicit RingEventDecoder(CaptureSession& session) : session_(session) {}

  void consume(const WeftRingSlot* slots, uint64_t count);

  bool ended() const { return ended_; }  // the tool's END record was read
  bool complete() const { return complete_; }
  const std::string& reason() const { return reason_; }
  const std::string& maps() const { return maps_; }

 private:
  ThreadContext* thread(uint64_t tid);
  // Makes `c` the running thread (null: an unknown thread, ignored).
  void bind(ThreadContext* c);

  // The multi-slot records, `record` pointing at their first slot with all
  // their slots in the block (`rest` after it for those carrying text);
  // each returns how many slots it used after the first.
  uint64_t decode_thread_start(const WeftRingSlot* record);
  uint64_t decode_thread_exit(const WeftRingSlot* record);
  uint64_t decode_sync(const WeftRingSlot* record);
  uint64_t decode_allocation(const WeftRingSlot* record);
  uint64_t decode_distribution(const WeftRingSlot* record);
  uint64_t decode_block_count(const WeftRingSlot* record);
  uint64_t decode_maps(const WeftRingSlot* record, uint64_t rest);
  // The last record: the loop stops there.
  void decode_end(const WeftRingSlot* record, uint64_t rest);

  CaptureSession& session_;
  std::vector<ThreadContext*> threads_;  // by weft id, also beyond max_threads
  ThreadContext* current_ = nullptr;
  CommunicationAnalyzer::ThreadState* current_state_ = nullptr;
  ImbalanceCounts::ThreadState* current_imbalance_ = nullptr;
  bool ended_ = false;
  bool complete_ = false;
  std::string reason_;
  std::string maps_;
};

}  // namespace weft
