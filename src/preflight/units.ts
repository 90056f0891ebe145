/** Byte sizes and rates as operators read and write them. */

const UNITS: Readonly<Record<string, number>> = {
  B: 1,
  kB: 1e3,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
};
const PER: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600 };

/** `50MB/s`, `200GB/h` or a number of bytes per second → bytes per second (undefined when not one). */
export function parseRate(rate: string | number): number | undefined {
  if (typeof rate === "number") return rate > 0 && Number.isFinite(rate) ? rate : undefined;
  const m = /^([0-9]+(?:\.[0-9]+)?)\s*([kKMGT]?i?B)\/([smh])$/.exec(rate.trim());
  if (!m) return undefined;
  const unit = UNITS[m[2] ?? ""];
  const per = PER[m[3] ?? ""];
  if (unit === undefined || per === undefined) return undefined;
  const v = (Number(m[1]) * unit) / per;
  return v > 0 ? v : undefined;
}
