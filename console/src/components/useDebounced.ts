import { useEffect, useState } from "react";

/**
 * `value` once it has stayed the same for `ms` milliseconds (compared as JSON): what asks the
 * server as a person types asks once per pause, not once per key. Beside the components, as
 * any page with a live answer would use it.
 */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  const key = JSON.stringify(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(JSON.parse(key) as T), ms);
    return () => clearTimeout(timer);
  }, [key, ms]);
  return settled;
}
