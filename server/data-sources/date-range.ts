/** A half-open time range [from, to) for list filters (createdAtFrom / createdAtTo ...). */
export interface DateRange {
  from?: Date;
  to?: Date;
}

export function dateRange(from: Date | undefined, to: Date | undefined): DateRange | undefined {
  return from || to ? { from, to } : undefined;
}
