// Merge tests (being written).
#include <gtest/gtest.h>
