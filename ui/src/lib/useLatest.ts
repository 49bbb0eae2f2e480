// A ref to the latest rendered value, for callbacks and effects that must read it without
// re-subscribing whenever it changes.
import { useInsertionEffect, useRef, type RefObject } from "react";

/** `value` as of the last committed render. Updated in an insertion effect, so it is current
 * before any layout or passive effect of the commit runs (children's included); never read it
 * while rendering. */
export function useLatest<T>(value: T): RefObject<T> {
  const ref = useRef(value);
  useInsertionEffect(() => {
    ref.current = value;
  });
  return ref;
}
