import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { Composer } from "./Composer";

describe("composer", () => {
  it("offers Stop for a turn parked on a decision, and says a message waits behind it", async () => {
    const onStop = vi.fn();
    render(<Composer running={false} waiting disabled={false} onSubmit={async () => true} onStop={onStop} />);
    expect(screen.getByRole("combobox", { name: "Message" }).getAttribute("placeholder")).toMatch(
      /Waiting for your decision — a message now is queued behind it/,
    );
    await userEvent.setup().click(screen.getByRole("button", { name: "Stop" }));
    expect(onStop).toHaveBeenCalledOnce();
  });

  it("offers Send when nothing runs or waits", () => {
    render(<Composer running={false} disabled={false} onSubmit={async () => true} onStop={() => {}} />);
    expect(screen.queryByRole("button", { name: "Stop" })).toBeNull();
    expect(screen.getByRole("button", { name: "Send" })).toBeTruthy();
  });
});
