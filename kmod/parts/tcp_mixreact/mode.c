// SPDX-License-Identifier: GPL-2.0
/* tcp_mixreact's own copy of core/mode.c (Kbuild links an object into one module) */
#include "../../core/mode.c"
