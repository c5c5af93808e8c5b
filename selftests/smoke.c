// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include "test.h"
TEST(smoke) { ASSERT_EQ(1, 1, "one"); }
