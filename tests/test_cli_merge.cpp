// Merge CLI tests (being written).
#include <gtest/gtest.h>
