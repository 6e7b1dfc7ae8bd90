// The page-usage analysis' tables (docs/profile-format.md): each page's
// first writer with the data object on it, each thread's accesses per page,
// the objects; and their readers.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzers/page_usage/page_usage_records.h"
#include "profile/data_objects.h"
#include "profile/profile.h"

namespace weft {

// page_first_writes: a page's first writer (UINT32_MAX: a thread id too
// large to keep), and the page_objects row of the data on it.
struct PageFirstWriteRow {
  PageFirstWrite write;
  uint32_t object = 0;
};

// Rows by page address; none when the analysis did not run.
std::vector<PageFirstWriteRow> page_first_writes(const Profile& profile);
// Rows by page address, then thread (one per pair).
std::vector<PageAccesses> page_accesses(const Profile& profile);
// page_objects, indexed by object id (line_address: the object's first page).
std::vector<DataObject> page_objects(const Profile& profile);

}  // namespace weft
