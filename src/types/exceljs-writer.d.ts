// exceljs's streaming workbook writer alone: loading the whole package also loads its reader (and
// the temporary-file module the reader uses), which a writer never needs.
declare module 'exceljs/lib/stream/xlsx/workbook-writer.js' {
  const WorkbookWriter: typeof import('exceljs').stream.xlsx.WorkbookWriter;
  export default WorkbookWriter;
}
