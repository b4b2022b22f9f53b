// Scale-out CLI tests (being written).
#include <gtest/gtest.h>
