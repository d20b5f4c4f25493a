// The target exists for its header; a C target needs one source file.
#include "CEpoll.h"
