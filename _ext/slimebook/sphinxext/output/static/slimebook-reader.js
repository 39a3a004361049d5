/* slimebook reader features (static file, added by slimebook.sphinxext.reader):
 * - every mermaid diagram opens full width in a <dialog> (click, Enter or Space); Escape or the close button
 *   returns it to its place and gives focus back to it;
 * - "copy link" buttons on excerpt captions (the excerpt's id) and on the targeted #L<n> line of a snapshot page.
 */
(() => {
  "use strict";

  // -- diagrams ---------------------------------------------------------------------------------------------
  let dialog = null;
  let opened = null; // { diagram, svg, placeholder }

  function ensureDialog() {
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.className = "slimebook-diagram-dialog";
    dialog.setAttribute("aria-label", "放大的图");
    const close = document.createElement("button");
    close.type = "button";
    close.className = "slimebook-diagram-close";
    close.textContent = "关闭（Esc）";
    close.addEventListener("click", () => dialog.close());
    const stage = document.createElement("div");
    stage.className = "slimebook-diagram-stage";
    dialog.append(close, stage);
    dialog.addEventListener("close", restore);
    document.body.append(dialog);
    return dialog;
  }

  function naturalSize(svg) {
    const box = svg.viewBox && svg.viewBox.baseVal;
    if (box && box.width && box.height) return [box.width, box.height];
    const rect = svg.getBoundingClientRect();
    return [rect.width, rect.height];
  }

  function openDiagram(diagram) {
    const svg = diagram.querySelector("svg");
    if (!svg || opened) return;
    const d = ensureDialog();
    const [width, height] = naturalSize(svg);
    // at least the diagram's own size (its labels at mermaid's font size), larger when the window allows
    const scale = Math.max(1, Math.min((window.innerWidth - 48) / width, (window.innerHeight - 96) / height));
    const placeholder = document.createElement("div");
    placeholder.style.height = `${diagram.getBoundingClientRect().height}px`;
    opened = { diagram, svg, placeholder, style: svg.getAttribute("style") };
    svg.replaceWith(placeholder);
    svg.setAttribute("style", `width: ${width * scale}px; height: ${height * scale}px; max-width: none;`);
    d.querySelector(".slimebook-diagram-stage").append(svg);
    d.showModal();
    d.querySelector(".slimebook-diagram-close").focus();
  }

  function restore() {
    if (!opened) return;
    const { diagram, svg, placeholder, style } = opened;
    opened = null;
    if (style === null) svg.removeAttribute("style");
    else svg.setAttribute("style", style);
    placeholder.replaceWith(svg);
    diagram.focus();
  }

  function setUpDiagram(diagram) {
    if (diagram.dataset.slimebookZoom) return;
    diagram.dataset.slimebookZoom = "1";
    diagram.tabIndex = 0;
    diagram.setAttribute("role", "button");
    diagram.setAttribute("aria-label", "放大这张图（Esc 退出）");
    diagram.title = "点击放大（Esc 退出）";
    diagram.classList.add("slimebook-zoomable");
    diagram.addEventListener("click", () => openDiagram(diagram));
    diagram.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        openDiagram(diagram);
      }
    });
  }

  // -- copy links -----------------------------------------------------------------------------------------
  function copyButton(label, fragment) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "slimebook-copylink";
    button.textContent = "复制链接";
    button.title = label;
    button.setAttribute("aria-label", label);
    button.addEventListener("click", async (event) => {
      event.preventDefault();
      event.stopPropagation();
      const url = new URL(`#${fragment()}`, window.location.href).href;
      try {
        await navigator.clipboard.writeText(url);
        button.textContent = "已复制";
      } catch (error) {
        button.textContent = "复制失败";
      }
      button.dataset.copied = url;
    });
    button.addEventListener("blur", () => { button.textContent = "复制链接"; });
    return button;
  }

  function setUpExcerpts() {
    for (const wrapper of document.querySelectorAll("div.slime-source[id]")) {
      const caption = wrapper.querySelector(":scope > .code-block-caption");
      if (!caption || caption.querySelector(".slimebook-copylink")) continue;
      caption.append(copyButton("复制这段摘录的链接", () => wrapper.id));
    }
  }

  function setUpSnapshotLines() {
    const page = document.querySelector(".slime-snapshot-page");
    if (!page) return;
    const button = copyButton("复制这一行的链接", () => button.dataset.line);
    button.classList.add("slimebook-copyline");
    const place = () => {
      const match = /^#(L\d+)$/.exec(window.location.hash);
      const line = match && document.getElementById(match[1]);
      if (!line || !page.contains(line)) {
        button.remove();
        return;
      }
      button.dataset.line = match[1];
      button.textContent = "复制链接";
      line.querySelector("a")?.after(button);
    };
    window.addEventListener("hashchange", place);
    place();
  }

  function start() {
    document.querySelectorAll(".mermaid").forEach(setUpDiagram);
    setUpExcerpts();
    setUpSnapshotLines();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
