#include "vm/qemu.h"
