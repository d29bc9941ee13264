#include "kir/interpret.h"
