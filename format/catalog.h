// Transitional forwarding header: the catalog moved to the DDI vocabulary component
// (ddi/catalog.h). New code includes that; this one goes once no file names it.
#ifndef CLTRACE_FORMAT_CATALOG_H_
#define CLTRACE_FORMAT_CATALOG_H_

#include "ddi/catalog.h"  // IWYU pragma: export

#endif  // CLTRACE_FORMAT_CATALOG_H_
