#include "narrow/test_support.h"
