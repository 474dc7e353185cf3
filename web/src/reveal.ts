// Bringing a panel that just opened into view, clear of the sticky composer at the bottom of a
// session (issue 16: the deny-with-reason and edit panels opened under it, their buttons hidden).

const GAP = 8;

function scroller(element: HTMLElement): HTMLElement {
  for (let parent = element.parentElement; parent; parent = parent.parentElement) {
    const overflow = getComputedStyle(parent).overflowY;
    if ((overflow === "auto" || overflow === "scroll") && parent.scrollHeight > parent.clientHeight) return parent;
  }
  return (document.scrollingElement as HTMLElement | null) ?? document.documentElement;
}

/** Scroll so `element` is visible and its bottom is above anything stuck to the viewport's
 * bottom (the composer); when it is too tall for that, its top stays in view. */
export function reveal(element: HTMLElement): void {
  element.scrollIntoView({ block: "nearest" });
  const box = element.getBoundingClientRect();
  let floor = window.innerHeight;
  document.querySelectorAll<HTMLElement>(".composer").forEach((bar) => {
    const top = bar.getBoundingClientRect().top;
    if (top > 0 && top < floor) floor = top;
  });
  const overlap = box.bottom + GAP - floor;
  if (overlap <= 0) return;
  scroller(element).scrollBy(0, Math.max(0, Math.min(overlap, box.top - GAP)));
}
