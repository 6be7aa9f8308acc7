/*
 * status: what a capacity-planning call returns. The values are the
 * program's exit statuses (cli/cli.h), so a command returns them as they
 * are: 0 ok, 1 a run or a write failed, 2 bad input (message printed).
 */
#ifndef CT_PLAN_STATUS_H
#define CT_PLAN_STATUS_H

enum { PLAN_OK = 0, PLAN_FAILED = 1, PLAN_BAD_INPUT = 2 };

#endif
