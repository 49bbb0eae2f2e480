import { describe, expect, it } from "vitest";
import { jobInfo } from "../../test/mockJobs";
import { draftOf, errorText, fieldOfError, formatCost, localInZone, scheduleOf } from "./jobText";

describe("job form helpers", () => {
  it("puts each engine message under the field it is about", () => {
    expect(fieldOfError('unknown time zone "Mars/Base": give an IANA name such as Europe/Berlin or UTC')).toBe("timezone");
    expect(fieldOfError("a job's title is 1 to 200 characters")).toBe("title");
    expect(fieldOfError("a job's prompt is 1 to 100000 characters")).toBe("prompt");
    expect(fieldOfError("no task agent `x` (a job runs a task agent). Available: generalist")).toBe("agent");
    expect(fieldOfError("an approval timeout is at least one second")).toBe("timeout");
    expect(fieldOfError('invalid cron schedule "0 0 25 * * * *": hour out of range')).toBe("schedule");
    expect(fieldOfError("the schedule fires more often than once every 60 seconds")).toBe("schedule");
    expect(fieldOfError("2027-03-28T02:30 does not exist in Europe/Berlin (the clocks skip it)")).toBe("schedule");
    expect(fieldOfError("the schedule has no fire time left (a time that has passed?)")).toBe("schedule");
    expect(fieldOfError("database is locked")).toBeNull();
  });

  it("reads the field the engine names first, and shows the message without it", () => {
    // The name wins over the words: this timezone message mentions the schedule.
    const zone = 'timezone: unknown time zone "Europe/Berln": give an IANA name such as Europe/Berlin or UTC';
    expect(fieldOfError(zone)).toBe("timezone");
    expect(errorText(zone)).toBe('unknown time zone "Europe/Berln": give an IANA name such as Europe/Berlin or UTC');
    expect(fieldOfError("schedule: the time zone has no 02:30 that day")).toBe("schedule");
    expect(fieldOfError("agent_id: no task agent `main` (a job runs a task agent). Available: scout")).toBe("agent");
    expect(fieldOfError("policies.approval_timeout_secs: an approval timeout is 1 to 31622400 seconds (a year)")).toBe("timeout");
    expect(fieldOfError("title: a job's title is 1 to 200 characters")).toBe("title");
    // Named, but not a field of the form: shown above its buttons, whole.
    expect(fieldOfError("client: no LLM client `nope` is configured")).toBeNull();
    // A prefix that is no field name is part of the message.
    expect(errorText("error: something")).toBe("error: something");
    expect(fieldOfError("note: the time is wrong")).toBe("schedule");
  });

  it("reads a one-shot time back into the field in the job's zone", () => {
    expect(localInZone("2026-12-24T09:00", "Europe/Berlin")).toBe("2026-12-24T09:00");
    expect(localInZone("2026-12-24 09:00:00", "Europe/Berlin")).toBe("2026-12-24T09:00");
    expect(localInZone("2026-12-24T08:00:00Z", "Europe/Berlin")).toBe("2026-12-24T09:00");
    expect(localInZone("2026-07-01T12:30:00+00:00", "America/New_York")).toBe("2026-07-01T08:30");
  });

  it("turns an interval into seconds and back into its largest whole unit", () => {
    const draft = draftOf(jobInfo(1, { schedule: { kind: "every", seconds: 7200 } }));
    expect([draft.every, draft.unit]).toEqual(["2", "hours"]);
    expect(scheduleOf(draft)).toEqual({ kind: "every", seconds: 7200 });
    expect(scheduleOf({ ...draft, every: "90", unit: "minutes" })).toEqual({ kind: "every", seconds: 5400 });
    expect(scheduleOf({ ...draft, every: "0" })).toBeNull();
    expect(scheduleOf({ ...draft, kind: "cron", cron: "  " })).toBeNull();
  });

  it("shows small costs to the hundredth of a cent", () => {
    expect(formatCost(null)).toBe("—");
    expect(formatCost(0.0042)).toBe("$0.0042");
    expect(formatCost(1.5)).toBe("$1.50");
  });
});
