// SPDX-License-Identifier: GPL-2.0
/* SyncMixReact congestion reaction; see mixreact.h. */
#include "mixreact.h"

/* Section 3.6.2 / Figure 3.16: the action for each SyncMix indication. */
static const u8 synctcp_mixreact_table[2][4] = {
	[0] = {		/* trend increasing */
		[SYNCTCP_MIX_R0_25] = SYNCTCP_MIXREACT_ADD_1,
		[SYNCTCP_MIX_R25_50] = SYNCTCP_MIXREACT_MUL_90,
		[SYNCTCP_MIX_R50_75] = SYNCTCP_MIXREACT_MUL_75,
		[SYNCTCP_MIX_R75_100] = SYNCTCP_MIXREACT_MUL_50,
	},
	[1] = {		/* trend decreasing */
		[SYNCTCP_MIX_R0_25] = SYNCTCP_MIXREACT_ADD_50PCT,
		[SYNCTCP_MIX_R25_50] = SYNCTCP_MIXREACT_ADD_25PCT,
		[SYNCTCP_MIX_R50_75] = SYNCTCP_MIXREACT_ADD_10PCT,
		[SYNCTCP_MIX_R75_100] = SYNCTCP_MIXREACT_KEEP,
	},
};

/*
 * What an action does to cwnd: a decrease to cwnd * beta_num / beta_den at
 * once; an increase by a share of cwnd per RTT, i.e. by a fixed step per
 * segment acknowledged (segments << 20, rounded up); step 0 stands for
 * Reno's alpha = 1 segment, 1 / cwnd per segment (synctcp_mixreact_step()).
 */
struct synctcp_mixreact_rule {
	u8 beta_num;
	u8 beta_den;		/* 0: not a decrease */
	bool increase;
	u32 step;		/* growth per segment; 0: 1 / cwnd */
};

static const struct synctcp_mixreact_rule synctcp_mixreact_rules[] = {
	[SYNCTCP_MIXREACT_RENO] = { 0 },
	[SYNCTCP_MIXREACT_ADD_1] = { .increase = true },
	[SYNCTCP_MIXREACT_MUL_90] = { .beta_num = 9, .beta_den = 10 },
	[SYNCTCP_MIXREACT_MUL_75] = { .beta_num = 3, .beta_den = 4 },
	[SYNCTCP_MIXREACT_MUL_50] = { .beta_num = 1, .beta_den = 2 },
	[SYNCTCP_MIXREACT_ADD_50PCT] = { .increase = true,
		.step = (SYNCTCP_MIXREACT_CREDIT_ONE + 1) / 2 },	/* cwnd / 2 */
	[SYNCTCP_MIXREACT_ADD_25PCT] = { .increase = true,
		.step = (SYNCTCP_MIXREACT_CREDIT_ONE + 3) / 4 },	/* cwnd / 4 */
	[SYNCTCP_MIXREACT_ADD_10PCT] = { .increase = true,
		.step = (SYNCTCP_MIXREACT_CREDIT_ONE + 9) / 10 },	/* cwnd / 10 */
	[SYNCTCP_MIXREACT_KEEP] = { 0 },
};

static const struct synctcp_mixreact_rule *synctcp_mixreact_rule_of(u8 action)
{
	if (action >= ARRAY_SIZE(synctcp_mixreact_rules))
		action = SYNCTCP_MIXREACT_RENO;
	return &synctcp_mixreact_rules[action];
}

/**
 * synctcp_mixreact_action_of - the table cell of a SyncMix indication
 * @trend: enum synctcp_mix_trend
 * @region: enum synctcp_mix_region
 *
 * Return: the action; SYNCTCP_MIXREACT_RENO when there is no indication.
 */
enum synctcp_mixreact_action synctcp_mixreact_action_of(u8 trend, u8 region)
{
	if (region > SYNCTCP_MIX_R75_100)
		region = SYNCTCP_MIX_R75_100;
	switch (trend) {
	case SYNCTCP_MIX_INCREASING:
		return synctcp_mixreact_table[0][region];
	case SYNCTCP_MIX_DECREASING:
		return synctcp_mixreact_table[1][region];
	default:
		return SYNCTCP_MIXREACT_RENO;
	}
}

bool synctcp_mixreact_is_increase(u8 action)
{
	return synctcp_mixreact_rule_of(action)->increase;
}

bool synctcp_mixreact_is_decrease(u8 action)
{
	return synctcp_mixreact_rule_of(action)->beta_den != 0;
}

/* Back to Reno's growth until the next decision (after a loss). */
void synctcp_mixreact_reset(struct synctcp_mixreact *r)
{
	r->action = SYNCTCP_MIXREACT_RENO;
	r->credit = 0;
}

/*
 * cwnd x beta now, but not below cwnd x keep_min / 1024; never below 2
 * (nor above a cwnd already below 2).
 */
static void synctcp_mixreact_cut(struct synctcp_mixreact *r,
				 const struct synctcp_mixreact_rule *rule,
				 struct synctcp_cwnd *w, u32 clamp, u32 keep_min)
{
	u32 cwnd = (u32)div_u64((u64)w->cwnd * rule->beta_num, rule->beta_den);
	u32 floor = (u32)(((u64)w->cwnd * min_t(u32, keep_min, 1024U)) >> 10);

	cwnd = max_t(u32, cwnd, floor);
	cwnd = max_t(u32, cwnd, min_t(u32, w->cwnd, SYNCTCP_MIN_CWND));
	w->cwnd = min_t(u32, cwnd, clamp);
	w->ssthresh = max_t(u32, w->cwnd, SYNCTCP_MIN_CWND);
	r->credit = 0;
}

/**
 * synctcp_mixreact_apply - put an action in force
 * @r: reaction state
 * @a: enum synctcp_mixreact_action
 * @w: window; a decrease changes cwnd and ssthresh at once
 * @clamp: the largest cwnd allowed (snd_cwnd_clamp)
 * @keep_min: a decrease keeps at least this share of cwnd, in 1/1024 (0:
 *	      the table's beta alone, as the dissertation has it)
 *
 * An increase only sets the rate that synctcp_mixreact_grow() applies on
 * the following ACKs; growth not yet in cwnd carries over.
 */
void synctcp_mixreact_apply(struct synctcp_mixreact *r, u8 a,
			    struct synctcp_cwnd *w, u32 clamp, u32 keep_min)
{
	const struct synctcp_mixreact_rule *rule = synctcp_mixreact_rule_of(a);

	r->action = a < ARRAY_SIZE(synctcp_mixreact_rules) ?
		    a : SYNCTCP_MIXREACT_RENO;
	if (rule->increase)
		r->increases++;
	if (rule->beta_den) {
		r->decreases++;
		synctcp_mixreact_cut(r, rule, w, clamp, keep_min);
	}
}

/**
 * synctcp_mixreact_decide - react to a new SyncMix indication
 * @r: reaction state
 * @trend: enum synctcp_mix_trend of the new indication
 * @region: enum synctcp_mix_region of the new indication
 * @w: window; a decrease changes cwnd and ssthresh at once
 * @clamp: the largest cwnd allowed (snd_cwnd_clamp)
 *
 * The dissertation's table, applied as synctcp_mixreact_apply() does.
 *
 * Return: the action now in force.
 */
enum synctcp_mixreact_action
synctcp_mixreact_decide(struct synctcp_mixreact *r, u8 trend, u8 region,
			struct synctcp_cwnd *w, u32 clamp)
{
	enum synctcp_mixreact_action a = synctcp_mixreact_action_of(trend, region);

	synctcp_mixreact_apply(r, a, w, clamp, 0);
	return a;
}

/*
 * Growth per acknowledged segment (segments << 20): alpha / cwnd, rounded
 * up so that one window of segments adds at least alpha.  Reno's 1 / cwnd
 * is divided out only when cwnd changed since the last ACK that grew.
 */
static u32 synctcp_mixreact_step(struct synctcp_mixreact *r,
				 const struct synctcp_mixreact_rule *rule,
				 u32 cwnd)
{
	if (rule->step)
		return rule->step;
	cwnd = max_t(u32, cwnd, 1);
	if (r->step_cwnd != cwnd) {
		r->step_cwnd = cwnd;
		r->step_1 = (SYNCTCP_MIXREACT_CREDIT_ONE + cwnd - 1) / cwnd;
	}
	return r->step_1;
}

/**
 * synctcp_mixreact_grow - the share of this ACK in the increase in force
 * @r: reaction state
 * @acked: segments this ACK acknowledged
 * @w: window
 * @clamp: the largest cwnd allowed (snd_cwnd_clamp)
 *
 * The caller calls this only when cwnd limits the flow, and not at all
 * while the action is SYNCTCP_MIXREACT_RENO (it then grows as Reno).
 * Decreases and "no change" leave cwnd alone between decisions.
 */
void synctcp_mixreact_grow(struct synctcp_mixreact *r, u32 acked,
			   struct synctcp_cwnd *w, u32 clamp)
{
	synctcp_mixreact_grow_by(r, acked, w, clamp, 1024);
}

/**
 * synctcp_mixreact_grow_by - synctcp_mixreact_grow() at a share of its rate
 * @r: reaction state
 * @acked: segments this ACK acknowledged
 * @w: window
 * @clamp: the largest cwnd allowed (snd_cwnd_clamp)
 * @scale: the share of the increase in force, in 1/1024 (at most 1024)
 */
void synctcp_mixreact_grow_by(struct synctcp_mixreact *r, u32 acked,
			      struct synctcp_cwnd *w, u32 clamp, u32 scale)
{
	const struct synctcp_mixreact_rule *rule = synctcp_mixreact_rule_of(r->action);
	u64 credit, cwnd, step;

	if (!rule->increase)
		return;
	step = ((u64)synctcp_mixreact_step(r, rule, w->cwnd) *
		min_t(u32, scale, 1024U) + 1023) >> 10;
	credit = r->credit + (u64)acked * step;
	cwnd = (u64)w->cwnd + (credit >> SYNCTCP_MIXREACT_CREDIT_SHIFT);
	r->credit = (u32)(credit & (SYNCTCP_MIXREACT_CREDIT_ONE - 1));
	if (cwnd >= clamp) {
		cwnd = clamp;
		r->credit = 0;
	}
	w->cwnd = (u32)cwnd;
}
