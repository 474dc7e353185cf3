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
  const floor = floorAt();
  const overlap = box.bottom + GAP - floor;
  if (overlap <= 0) return;
  scroller(element).scrollBy(0, Math.max(0, Math.min(overlap, box.top - GAP)));
}

/** The top of what is visible below the sticky top bar. */
function ceiling(): number {
  const bar = document.querySelector<HTMLElement>(".topbar");
  const bottom = bar?.getBoundingClientRect().bottom ?? 0;
  return bottom > 0 ? bottom : 0;
}

/** The top of the composer when it lies over the viewport (sticky), else the viewport's bottom. */
function floorAt(): number {
  let floor = window.innerHeight;
  document.querySelectorAll<HTMLElement>(".composer").forEach((bar) => {
    const top = bar.getBoundingClientRect().top;
    if (top > 0 && top < floor) floor = top;
  });
  return floor;
}

/** Whether `element` is wholly on screen: below the top bar, above the bottom of the viewport,
 * and not under the composer (issue 33: Y decided a card whose buttons nobody could see). */
export function isOnScreen(element: HTMLElement): boolean {
  const box = element.getBoundingClientRect();
  if (box.width === 0 && box.height === 0) return false;
  const composer = Array.from(document.querySelectorAll<HTMLElement>(".composer")).some((bar) => {
    const r = bar.getBoundingClientRect();
    return r.top < box.bottom && r.bottom > box.top && r.left < box.right && r.right > box.left;
  });
  return !composer && box.top >= ceiling() && box.bottom <= Math.min(window.innerHeight, floorAt());
}

/** Bring an approval card into view: the whole card when it fits, else at least its decision
 * buttons, clear of the top bar and the composer. A panel open on it (a reason being typed,
 * arguments edited) is what the person is at: it stays in view instead of the card's top (the
 * transcript growing scrolled a tall card's top into view and its open panel out of it). */
export function revealDecision(card: HTMLElement): void {
  const panel = card.querySelector<HTMLElement>(".mode-panel");
  if (panel) {
    if (!isOnScreen(panel)) reveal(panel);
    return;
  }
  const buttons = card.querySelector<HTMLElement>(".decision-actions");
  if (buttons && isOnScreen(buttons) && isOnScreen(card)) return;
  reveal(card);
  if (buttons && !isOnScreen(buttons)) reveal(buttons);
}
