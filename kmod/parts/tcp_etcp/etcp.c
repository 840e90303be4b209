// SPDX-License-Identifier: GPL-2.0
/* tcp_etcp's own copy of core/etcp.c (Kbuild links an object into one module) */
#include "../../core/etcp.c"
