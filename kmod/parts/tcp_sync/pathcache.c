// SPDX-License-Identifier: GPL-2.0
/* tcp_sync's own copy of glue/pathcache.c (Kbuild links an object into one module) */
#include "../../glue/pathcache.c"
