/*
 * An average answered from a rollup of a PostgreSQL dataset as PostgreSQL answers AVG. The rollup holds the exact sum
 * and count of each group (a DECIMAL sum printed with its scale, or a floating-point one). PostgreSQL's AVG of a
 * numeric or integer column is a numeric division (numeric_div, select_div_scale): at least 16 significant digits,
 * counted in base-10000 groups, never fewer fraction digits than the sum has, rounded half away from zero; the
 * connector gives the nearest number of its text. So the reader divides the exact sum by the count the same way, in
 * decimal text, and takes the nearest number of that. A sum that is not plain decimal text (a floating-point column:
 * '1.5e+20', 'inf') is divided as a double, as PostgreSQL divides a float8 sum. (The other sources average floating
 * point; their averages are divided in DuckDB: match.ts.)
 */

const PLAIN = /^(-?)(\d+)(?:\.(\d+))?$/;
/** PostgreSQL's NUMERIC_MIN_SIG_DIGITS, DEC_DIGITS and NUMERIC_MAX_DISPLAY_SCALE. */
const MIN_SIG_DIGITS = 16;
const DEC_DIGITS = 4;
const MAX_DISPLAY_SCALE = 1000;

/** The output columns holding 'sum/count' text (match.ts averageColumns) as PostgreSQL's AVG numbers. */
export function divideAverages(rows: unknown[][], columns: number[]): unknown[][] {
  if (columns.length === 0) return rows;
  return rows.map((row) => {
    const out = [...row];
    for (const i of columns) out[i] = averageOf(out[i]);
    return out;
  });
}

function averageOf(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const cut = v.lastIndexOf('/');
  const sum = v.slice(0, cut);
  const count = BigInt(v.slice(cut + 1) || '0');
  if (sum === '' || count === 0n) return null;
  const m = PLAIN.exec(sum);
  if (!m) return Number(sum) / Number(count);
  const negative = m[1] === '-';
  const scale = m[3]?.length ?? 0;
  const digits = BigInt(`${m[2]}${m[3] ?? ''}`);
  const resultScale = postgresDivScale(m[2], m[3] ?? '', count, scale);
  // round(digits / 10^scale / count, resultScale), half away from zero, in integers.
  const num = digits * 10n ** BigInt(resultScale);
  const den = count * 10n ** BigInt(scale);
  const q = (2n * num + den) / (2n * den);
  return Number(`${negative && q !== 0n ? '-' : ''}${decimalText(q, resultScale)}`);
}

function decimalText(q: bigint, scale: number): string {
  if (scale === 0) return q.toString();
  const s = q.toString().padStart(scale + 1, '0');
  return `${s.slice(0, -scale)}.${s.slice(-scale)}`;
}

/** A value's weight and first digit in base 10000 (PostgreSQL's NumericVar), from its integer and fraction text. */
function baseTenThousand(intText: string, fracText: string): { weight: number; first: number } {
  const int = intText.replace(/^0+/, '');
  if (int) {
    const lead = int.length % DEC_DIGITS || DEC_DIGITS;
    return { weight: Math.ceil(int.length / DEC_DIGITS) - 1, first: Number(int.slice(0, lead)) };
  }
  for (let j = 0; j * DEC_DIGITS < fracText.length; j++) {
    const group = Number(fracText.slice(j * DEC_DIGITS, (j + 1) * DEC_DIGITS).padEnd(DEC_DIGITS, '0'));
    if (group !== 0) return { weight: -(j + 1), first: group };
  }
  return { weight: 0, first: 0 };
}

/** select_div_scale of numeric.c for sum / count. */
function postgresDivScale(intText: string, fracText: string, count: bigint, scale: number): number {
  const a = baseTenThousand(intText, fracText);
  const b = baseTenThousand(count.toString(), '');
  let qweight = a.weight - b.weight;
  if (a.first <= b.first) qweight--;
  const rscale = Math.max(MIN_SIG_DIGITS - qweight * DEC_DIGITS, scale, 0);
  return Math.min(rscale, MAX_DISPLAY_SCALE);
}
