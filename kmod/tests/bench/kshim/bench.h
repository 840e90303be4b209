/* SPDX-License-Identifier: GPL-2.0 */
/* What bench_kernel.c takes from kshim/kernel.c and the modules' objects. */
#ifndef BENCH_KSHIM_BENCH_H
#define BENCH_KSHIM_BENCH_H

/* the registered ops (tcp_register_congestion_control()) */
extern struct tcp_congestion_ops *bench_ca[16];
extern unsigned int bench_n_ca;
extern struct net bench_net;

/* each module's init function (module_init() in shim.h) */
int bench_modinit_cubictcp_register(void);
int bench_modinit_bbr_register(void);
int bench_modinit_tcp_vegas_register(void);
int bench_modinit_dctcp_register(void);
int bench_modinit_sync_register(void);
int bench_modinit_mixreact_register(void);
int bench_modinit_etcp_register(void);

#endif /* BENCH_KSHIM_BENCH_H */
